package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.yaml.snakeyaml.Yaml;

/**
 * {@code kubectl apply -f examples/<scenario>/}, as the examples' docs say, applies only what a
 * user should apply on a cluster running kdra: never the Nodes and ResourceSlices that stand for a
 * cluster for {@code bin/dra-alloc}, nor the objects a kdra service writes (labelled {@code
 * app.kubernetes.io/managed-by}, e.g. the computeclass-bridge's). They live in a {@code cluster/}
 * subfolder, which kubectl skips without {@code -R}.
 */
class ExampleApplyTest {

  /** Kinds that stand for the cluster itself: its nodes and what its drivers publish. */
  private static final Set<String> CLUSTER_KINDS = Set.of("Node", "ResourceSlice");

  static List<Path> folders() {
    List<Path> folders = new ArrayList<>(ExampleFiles.scenarios());
    folders.add(ExampleFiles.EXAMPLES);
    return folders;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("folders")
  void applyingTheFolderCreatesOnlyWhatAUserOwns(Path folder) {
    List<Path> applied = ExampleFiles.kubectlApplyFiles(folder);
    List<String> cluster = new ArrayList<>();
    for (Path file : applied) {
      for (Map<?, ?> object : objects(file)) {
        String kind = String.valueOf(object.get("kind"));
        String managedBy = managedBy(object);
        if (CLUSTER_KINDS.contains(kind) || managedBy != null) {
          cluster.add(
              ExampleFiles.EXAMPLES.relativize(file)
                  + ": "
                  + kind
                  + (managedBy == null ? "" : " managed by " + managedBy));
        }
      }
    }
    assertThat(cluster)
        .as("objects that `kubectl apply -f %s/` would create", folder.getFileName())
        .isEmpty();
  }

  /**
   * {@code kubectl apply} cannot set an object's {@code status}: the API server ignores it on
   * create. An example whose outcome rests on a status (a claim "allocated already") would show
   * what no user can reproduce; what holds devices first must be a workload the user applies.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("folders")
  void applyingTheFolderSetsNoStatus(Path folder) {
    List<String> withStatus = new ArrayList<>();
    for (Path file : ExampleFiles.kubectlApplyFiles(folder)) {
      for (Map<?, ?> object : objects(file)) {
        if (object.containsKey("status")) {
          withStatus.add(
              ExampleFiles.EXAMPLES.relativize(file)
                  + ": "
                  + object.get("kind")
                  + " "
                  + name(object));
        }
      }
    }
    assertThat(withStatus)
        .as(
            "objects of `kubectl apply -f %s/` with a status the API server ignores",
            folder.getFileName())
        .isEmpty();
  }

  @Test
  void everyScenarioStillHasAClusterForDraAlloc() {
    assertThat(ExampleFiles.scenarios())
        .isNotEmpty()
        .allSatisfy(dir -> assertThat(ExampleFiles.clusterFiles(dir)).isNotEmpty());
  }

  @Test
  void kubectlsFolderRulesAreReadAsKubectlReadsThem(@org.junit.jupiter.api.io.TempDir Path tmp)
      throws IOException {
    for (String name : List.of("a.yaml", "b.yml", "c.json", "d.txt", "e.yaml.orig")) {
      Files.writeString(tmp.resolve(name), "");
    }
    Files.createDirectories(tmp.resolve("sub"));
    Files.writeString(tmp.resolve("sub/f.yaml"), "");
    Files.createSymbolicLink(tmp.resolve("g.yaml"), tmp.resolve("sub/f.yaml"));
    assertThat(ExampleFiles.kubectlApplyFiles(tmp).stream().map(p -> p.getFileName().toString()))
        .containsExactly("a.yaml", "b.yml", "c.json", "g.yaml");
  }

  /** The object's {@code metadata.name}, or null. */
  private static Object name(Map<?, ?> object) {
    return object.get("metadata") instanceof Map<?, ?> metadata ? metadata.get("name") : null;
  }

  /** The object's {@code app.kubernetes.io/managed-by} label, or null. */
  private static String managedBy(Map<?, ?> object) {
    return object.get("metadata") instanceof Map<?, ?> metadata
            && metadata.get("labels") instanceof Map<?, ?> labels
            && labels.get("app.kubernetes.io/managed-by") instanceof String owner
        ? owner
        : null;
  }

  /** The objects of a file: top-level documents and the items of a {@code kind: List}. */
  private static List<Map<?, ?>> objects(Path file) {
    List<Map<?, ?>> out = new ArrayList<>();
    try (Reader in = Files.newBufferedReader(file)) {
      for (Object doc : new Yaml().loadAll(in)) {
        if (!(doc instanceof Map<?, ?> object)) {
          continue;
        }
        if ("List".equals(object.get("kind")) && object.get("items") instanceof List<?> items) {
          Stream.of(items.toArray())
              .filter(Map.class::isInstance)
              .forEach(i -> out.add((Map<?, ?>) i));
        } else {
          out.add(object);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }
}
