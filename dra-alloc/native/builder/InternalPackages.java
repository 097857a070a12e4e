import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.classfile.constantpool.Utf8Entry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Prints "module/package" for each package of the running JDK that the image builder's jars (in
 * the directory given) use but the JDK does not export: what the native-image driver opens to the
 * builder with --add-exports. Read from the jars' constant pools, so a new builder version needs
 * no list kept by hand. Runs on JDK 25 as a source-file program (the class-file API).
 */
public class InternalPackages {
  private static final Pattern CLASS_NAME = Pattern.compile("(?:jdk[/.]internal|sun|com[/.]sun)[/.][A-Za-z0-9_/.$]+");

  public static void main(String[] args) throws IOException {
    Map<String, Module> moduleOfPackage = ModuleLayer.boot().modules().stream()
        .flatMap(module -> module.getPackages().stream().map(pkg -> Map.entry(pkg, module)))
        .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a));
    TreeSet<String> used = new TreeSet<>();
    try (Stream<Path> jars = Files.list(Path.of(args[0]))) {
      for (Path jar : jars.filter(p -> p.toString().endsWith(".jar")).toList()) {
        try (JarFile file = new JarFile(jar.toFile())) {
          for (var entry : file.stream().filter(e -> e.getName().endsWith(".class")).toList()) {
            byte[] bytes = file.getInputStream(entry).readAllBytes();
            if (entry.getName().endsWith("module-info.class")) {
              continue;
            }
            for (PoolEntry poolEntry : ClassFile.of().parse(bytes).constantPool()) {
              if (poolEntry instanceof Utf8Entry utf8) {
                Matcher matcher = CLASS_NAME.matcher(utf8.stringValue());
                while (matcher.find()) {
                  // a class name (its package is all but the last part) or a package name itself
                  String name = matcher.group().replace('/', '.');
                  used.add(name);
                  int dot = name.lastIndexOf('.');
                  if (dot > 0) {
                    used.add(name.substring(0, dot));
                  }
                }
              }
            }
          }
        }
      }
    }
    for (String pkg : used) {
      Module module = moduleOfPackage.get(pkg);
      if (module != null && !module.isExported(pkg)) {
        System.out.println(module.getName() + "/" + pkg);
      }
    }
  }
}
