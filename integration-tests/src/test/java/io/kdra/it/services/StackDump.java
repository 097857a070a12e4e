package io.kdra.it.services;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.controlplane.UpstreamControllers;
import io.kdra.it.support.TestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * What a failed test leaves for a person to read, under {@code target/it-dumps/<stack>/<test>/}:
 * each process's log and readiness, the relevant objects as YAML, and what the nodes keep.
 */
final class StackDump {

  private final String name;
  private final KubernetesClient client;
  private final String namespace;
  private final StackServices services;
  private final StackNodes nodes;

  StackDump(
      String name,
      KubernetesClient client,
      String namespace,
      StackServices services,
      StackNodes nodes) {
    this.name = name;
    this.client = client;
    this.namespace = namespace;
    this.services = services;
    this.nodes = nodes;
  }

  /** Writes the dump of {@code test}; {@code upstream} may be null. Returns its directory. */
  Path dump(String test, UpstreamControllers upstream) {
    Path dir =
        Path.of("target", "it-dumps", name, test.replaceAll("[^A-Za-z0-9_.-]", "_"))
            .toAbsolutePath();
    try {
      Files.createDirectories(dir);
      services.dumpTo(dir);
      if (upstream != null) {
        for (Map.Entry<String, Path> log : upstream.logs().entrySet()) {
          TestFiles.write(
              dir.resolve(log.getKey() + ".readiness.txt"),
              upstream.alive(log.getKey()) ? "running" : "exited");
          if (Files.exists(log.getValue())) {
            Files.copy(
                log.getValue(),
                dir.resolve(log.getKey() + ".log"),
                StandardCopyOption.REPLACE_EXISTING);
          }
        }
      }
      objects(dir);
      nodes.dumpTo(dir);
    } catch (IOException | RuntimeException e) {
      TestFiles.write(dir.resolve("dump-error.txt"), e.toString());
    }
    System.out.println("[stack] " + test + " failed; logs and objects in " + dir);
    return dir;
  }

  private void objects(Path dir) {
    dumpList(dir, "pods", () -> client.pods().inNamespace(namespace).list().getItems());
    dumpList(
        dir,
        "deployments",
        () -> client.apps().deployments().inNamespace(namespace).list().getItems());
    dumpList(
        dir,
        "replicasets",
        () -> client.apps().replicaSets().inNamespace(namespace).list().getItems());
    dumpList(
        dir,
        "resourceclaims",
        () -> client.resources(ResourceClaim.class).inNamespace(namespace).list().getItems());
    dumpList(
        dir,
        "resourceclaimtemplates",
        () ->
            client.resources(ResourceClaimTemplate.class).inNamespace(namespace).list().getItems());
    dumpList(dir, "resourceslices", () -> client.resources(ResourceSlice.class).list().getItems());
    dumpList(dir, "deviceclasses", () -> client.resources(DeviceClass.class).list().getItems());
    dumpList(dir, "nodes", () -> client.nodes().list().getItems());
    dumpList(dir, "events", () -> client.v1().events().inAnyNamespace().list().getItems());
    dumpList(
        dir,
        "events.k8s.io",
        () -> client.events().v1().events().inAnyNamespace().list().getItems());
  }

  private static void dumpList(Path dir, String what, Supplier<List<?>> list) {
    try {
      TestFiles.write(dir.resolve(what + ".yaml"), Serialization.asYaml(list.get()));
    } catch (RuntimeException e) {
      TestFiles.write(dir.resolve(what + ".yaml"), "# " + e);
    }
  }
}
