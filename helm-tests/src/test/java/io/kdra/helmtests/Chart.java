package io.kdra.helmtests;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * The chart under helm/kdra, linted and rendered by the Helm that helm-java embeds (a native
 * library, no binary on the PATH). Every call works on copies in temporary files; the chart is
 * never written to.
 */
final class Chart {

  static final Path DIR = Path.of("..", "helm", "kdra").toAbsolutePath().normalize();
  static final String RELEASE = "kdra";
  static final String NAMESPACE = "kdra-system";

  /** The oldest Kubernetes the chart supports (Chart.yaml kubeVersion); Helm's default is 1.20. */
  static final String KUBE_VERSION = "1.34.0";

  private Chart() {}

  /** Renders the chart with these values laid over values.yaml; throws Helm's error on failure. */
  static String template(Map<String, Object> values) {
    return template(values, NAMESPACE);
  }

  /** Renders the chart into another release namespace. */
  static String template(Map<String, Object> values, String namespace) {
    Path file = writeTemp(values);
    try {
      return new Helm(DIR)
          .template()
          .withName(RELEASE)
          .withNamespace(namespace)
          .withKubeVersion(KUBE_VERSION)
          .withValuesFile(file)
          .call();
    } finally {
      delete(file);
    }
  }

  /**
   * Renders the chart as {@code helm upgrade} would where the cluster holds the publisher's TLS
   * Secret with this data (base64 values): Helm's template has no cluster to look it up in, so a
   * copy of the chart defines {@code kdra.existingPublisherTls} (the chart's only lookup of it)
   * anew in a file that Helm parses after _helpers.tpl (files of one depth in reverse name order;
   * the last definition of a name wins).
   */
  static List<HasMetadata> renderUpgrade(
      Map<String, Object> values, Map<String, String> existingTlsSecretData) {
    Path copy = copyChart();
    Path file = writeTemp(values);
    try {
      String data = Serialization.asJson(existingTlsSecretData);
      Files.writeString(
          copy.resolve("templates/_0-existing-publisher-tls.tpl"),
          "{{- define \"kdra.existingPublisherTls\" -}}" + data + "{{- end -}}\n");
      String manifest =
          new Helm(copy)
              .template()
              .withName(RELEASE)
              .withNamespace(NAMESPACE)
              .withKubeVersion(KUBE_VERSION)
              .withValuesFile(file)
              .call();
      return parse(manifest);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      delete(file);
      deleteTree(copy);
    }
  }

  /** Renders and parses every object. */
  static List<HasMetadata> render(Map<String, Object> values) {
    return render(values, NAMESPACE);
  }

  /** Renders into another release namespace and parses every object. */
  static List<HasMetadata> render(Map<String, Object> values, String namespace) {
    return parse(template(values, namespace));
  }

  private static List<HasMetadata> parse(String manifest) {
    List<HasMetadata> objects = new ArrayList<>();
    for (String doc : manifest.split("(?m)^---\\s*$")) {
      boolean empty = doc.lines().allMatch(l -> l.isBlank() || l.startsWith("#"));
      if (!empty) {
        objects.add(Serialization.unmarshal(doc));
      }
    }
    return objects;
  }

  /**
   * Lints a copy of the chart whose values.yaml is the chart's with these values laid over it (helm
   * lint has no values file option in helm-java).
   */
  static LintResult lint(Map<String, Object> values) {
    Path copy = copyChart();
    try {
      Map<String, Object> merged = merge(defaults(), values);
      Files.writeString(copy.resolve("values.yaml"), yaml().dump(merged));
      return new Helm(copy).lint().strict().call();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      deleteTree(copy);
    }
  }

  /** The chart's own values.yaml. */
  static Map<String, Object> defaults() {
    try (InputStream in = Files.newInputStream(DIR.resolve("values.yaml"))) {
      return yaml().load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** src/test/resources/full-values.yaml: every value set. */
  static Map<String, Object> fullValues() {
    try (InputStream in = Chart.class.getResourceAsStream("/full-values.yaml")) {
      return yaml().load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Values from pairs of dotted paths and values: {@code values("a.b", 1, "a.c", true)}. Keys with
   * dots cannot be expressed this way; tests that need them build maps.
   */
  static Map<String, Object> values(Object... pathsAndValues) {
    Map<String, Object> root = new LinkedHashMap<>();
    for (int i = 0; i < pathsAndValues.length; i += 2) {
      String[] path = ((String) pathsAndValues[i]).split("\\.");
      Map<String, Object> m = root;
      for (int j = 0; j < path.length - 1; j++) {
        m = child(m, path[j]);
      }
      m.put(path[path.length - 1], pathsAndValues[i + 1]);
    }
    return root;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> child(Map<String, Object> m, String key) {
    return (Map<String, Object>) m.computeIfAbsent(key, k -> new LinkedHashMap<String, Object>());
  }

  /** b laid over a, maps merged key by key, everything else replaced. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> merge(Map<String, Object> a, Map<String, Object> b) {
    Map<String, Object> out = new LinkedHashMap<>(a);
    b.forEach(
        (k, v) -> {
          Object old = out.get(k);
          if (old instanceof Map<?, ?> om && v instanceof Map<?, ?> vm) {
            out.put(k, merge((Map<String, Object>) om, (Map<String, Object>) vm));
          } else {
            out.put(k, v);
          }
        });
    return out;
  }

  private static Yaml yaml() {
    DumperOptions o = new DumperOptions();
    o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
    return new Yaml(o);
  }

  private static Path writeTemp(Map<String, Object> values) {
    try {
      Path file = Files.createTempFile("kdra-values-", ".yaml");
      Files.writeString(file, yaml().dump(values));
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path copyChart() {
    try {
      Path target = Files.createTempDirectory("kdra-chart-").resolve("kdra");
      Files.walkFileTree(
          DIR,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
                throws IOException {
              Files.createDirectories(target.resolve(DIR.relativize(dir).toString()));
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              Files.copy(
                  file,
                  target.resolve(DIR.relativize(file).toString()),
                  StandardCopyOption.REPLACE_EXISTING);
              return FileVisitResult.CONTINUE;
            }
          });
      return target;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void delete(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // a temporary file; the OS cleans up
    }
  }

  private static void deleteTree(Path dir) {
    try (var paths = Files.walk(dir.getParent())) {
      paths.sorted((x, y) -> y.getNameCount() - x.getNameCount()).forEach(Chart::delete);
    } catch (IOException e) {
      // temporary
    }
  }
}
