package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassSpec;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The DeviceClasses the chart installs belong to the Helm release: an example that a user applies
 * with {@code kubectl apply -f examples/<scenario>/<file>.yaml} must not define one of them (it
 * would take the object over from Helm, or change its selector under every other claim). Examples
 * use the chart's class, or a class of their own under another name. For {@code bin/dra-alloc},
 * which reads only files, the chart's class is in the {@code cluster/cluster.yaml} the examples
 * share (the file that stands for a cluster running kdra, never applied), exactly as the chart
 * renders it.
 */
class ExampleClassesTest {

  private static final Path EXAMPLES = ExampleFiles.EXAMPLES;

  @Test
  void noScenarioFileDefinesAClassTheChartInstalls() throws IOException {
    Map<String, DeviceClassSpec> chart = chartClasses();
    assertThat(chart).as("the chart renders DeviceClasses").isNotEmpty();
    List<String> taken = new ArrayList<>();
    for (Path file : exampleFiles()) {
      if (isClusterFile(file)) {
        continue;
      }
      for (DeviceClass dc : deviceClasses(file)) {
        if (chart.containsKey(dc.getMetadata().getName())) {
          taken.add(EXAMPLES.relativize(file) + ": " + dc.getMetadata().getName());
        }
      }
    }
    assertThat(taken).as("example files defining a DeviceClass the chart installs").isEmpty();
  }

  @Test
  void theClusterFilesHoldTheChartsClassesAsTheChartRendersThem() throws IOException {
    Map<String, DeviceClassSpec> chart = chartClasses();
    for (Path file : exampleFiles()) {
      if (!isClusterFile(file)) {
        continue;
      }
      for (DeviceClass dc : deviceClasses(file)) {
        String name = dc.getMetadata().getName();
        if (chart.containsKey(name)) {
          assertThat(dc.getSpec())
              .as("%s: DeviceClass %s as the chart renders it", EXAMPLES.relativize(file), name)
              .isEqualTo(chart.get(name));
        }
      }
    }
  }

  /** A file of a cluster folder: it stands for the cluster, for dra-alloc. */
  private static boolean isClusterFile(Path file) {
    return file.getParent().getFileName().toString().equals(ExampleFiles.CLUSTER_FOLDER);
  }

  /** Every DeviceClass the chart renders with its default values (both drivers' classes on). */
  private static Map<String, DeviceClassSpec> chartClasses() {
    Map<String, DeviceClassSpec> classes = new java.util.TreeMap<>();
    Chart.render(Map.of()).stream()
        .filter(DeviceClass.class::isInstance)
        .map(DeviceClass.class::cast)
        .forEach(dc -> classes.put(dc.getMetadata().getName(), dc.getSpec()));
    return classes;
  }

  /** Every YAML file of every example folder (a cluster file linked from several, once each). */
  private static List<Path> exampleFiles() throws IOException {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> all = Files.walk(EXAMPLES)) {
      for (Path f : all.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        Path real = f.toRealPath();
        if (!files.contains(real)) {
          files.add(real);
        }
      }
    }
    assertThat(files).isNotEmpty();
    return files;
  }

  /** The DeviceClasses of a file: top-level documents and the items of a {@code kind: List}. */
  private static List<DeviceClass> deviceClasses(Path file) {
    List<DeviceClass> out = new ArrayList<>();
    try (Reader in = Files.newBufferedReader(file)) {
      for (Object doc : new Yaml().loadAll(in)) {
        if (!(doc instanceof Map<?, ?> object)) {
          continue;
        }
        List<?> items =
            "List".equals(object.get("kind")) && object.get("items") instanceof List<?> l
                ? l
                : List.of(object);
        for (Object item : items) {
          if (item instanceof Map<?, ?> m && "DeviceClass".equals(m.get("kind"))) {
            out.add(Serialization.jsonMapper().convertValue(m, DeviceClass.class));
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }
}
