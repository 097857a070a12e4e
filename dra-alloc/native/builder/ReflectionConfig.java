import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;
import java.util.jar.JarFile;

/**
 * Writes the reachability metadata (reachability-metadata.json) that lets Jackson read and write
 * fabric8's Kubernetes model in the native image: every model class of the packages dra-alloc
 * reads (core, meta and resource.k8s.io/v1, and fabric8's own Jackson glue) with its
 * constructors, methods and fields open to reflection. Builders and fluent classes are left out
 * (the model's Jackson binding never uses them; they are two thirds of the classes). Also the
 * Caffeine classes that dra-core's CEL compile cache (bounded by size, strong keys and values)
 * is made of, which Caffeine's factories find by name: SSMS (the cache) and PSMS (its nodes). Derived
 * from the jar at build time, so a new fabric8 version needs no list kept by hand.
 *
 * <p>Usage: java ReflectionConfig.java JAR OUT_DIR
 */
public class ReflectionConfig {
  private static final List<String> PACKAGES =
      List.of(
          "io.fabric8.kubernetes.api.model",
          "io.fabric8.kubernetes.api.model.resource.v1",
          "io.fabric8.kubernetes.api.model.runtime",
          "io.fabric8.kubernetes.api.model.version",
          "io.fabric8.kubernetes.internal",
          "io.fabric8.kubernetes.model.jackson",
          "io.fabric8.kubernetes.model.util");

  private static final List<String> CAFFEINE_GENERATED = List.of("SSMS", "PSMS");

  public static void main(String[] args) throws IOException {
    TreeSet<String> types = new TreeSet<>();
    try (JarFile jar = new JarFile(args[0])) {
      jar.stream()
          .map(entry -> entry.getName())
          .filter(name -> name.endsWith(".class"))
          .map(name -> name.substring(0, name.length() - ".class".length()).replace('/', '.'))
          .filter(ReflectionConfig::isModelClass)
          .forEach(types::add);
    }
    StringBuilder json = new StringBuilder("{\n  \"reflection\": [\n");
    String separator = "";
    for (String type : types) {
      json.append(separator)
          .append("    {\"type\": \"")
          .append(type)
          .append("\", \"allDeclaredConstructors\": true, \"allDeclaredMethods\": true,")
          .append(" \"allPublicMethods\": true, \"allDeclaredFields\": true}");
      separator = ",\n";
    }
    json.append("\n  ]\n}\n");
    Path out = Path.of(args[1]);
    Files.createDirectories(out);
    Files.writeString(out.resolve("reachability-metadata.json"), json);
    System.err.println("build-native-image: " + types.size() + " classes open to reflection");
  }

  private static boolean isModelClass(String name) {
    int dot = name.lastIndexOf('.');
    String pkg = name.substring(0, dot);
    String simple = name.substring(dot + 1);
    if (pkg.equals("com.github.benmanes.caffeine.cache")) {
      return CAFFEINE_GENERATED.contains(simple);
    }
    return PACKAGES.contains(pkg)
        && !simple.contains("Builder")
        && !simple.contains("Fluent")
        && !simple.contains("Nested");
  }
}
