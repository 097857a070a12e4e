import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.TreeMap;
import java.util.jar.JarFile;

/**
 * Prints a digest of a jar's contents, the same for two builds of the same classes and resources:
 * each entry's name, size and CRC-32, in name order. The jar file's own bytes are not used; they
 * change with every build (entry times), and the native executable's cache key must not.
 *
 * <p>Usage: java JarDigest.java JAR
 */
public class JarDigest {
  public static void main(String[] args) throws IOException, NoSuchAlgorithmException {
    TreeMap<String, String> entries = new TreeMap<>();
    try (JarFile jar = new JarFile(args[0])) {
      jar.stream()
          .filter(e -> !e.isDirectory())
          .forEach(e -> entries.put(e.getName(), e.getSize() + " " + Long.toHexString(e.getCrc())));
    }
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    entries.forEach(
        (name, sizeAndCrc) -> sha.update((name + " " + sizeAndCrc + "\n").getBytes(StandardCharsets.UTF_8)));
    System.out.println(HexFormat.of().formatHex(sha.digest()));
  }
}
