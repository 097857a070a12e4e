package io.kdra.it.services;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.nodes.RealNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/** Pods for real nodes, and what the tests read back from them. */
public final class RealPods {
  private RealPods() {}

  /** The last line a {@link #showingDevices} container prints, once it has printed the rest. */
  public static final String LISTED = "kdra-listed";

  /**
   * Generous on a loaded 2-core machine: a pod's first start pulls nothing but creates a sandbox
   * and a container, and the claim-controller, the kubelet and the driver each take their turn.
   */
  public static final Duration POD_TIMEOUT = Duration.ofSeconds(180);

  /**
   * {@code pod} (from {@link Dra}) made runnable on a real node: busybox from the node's own
   * images, printing its environment and {@code /dev}, then {@link #LISTED}, then sleeping.
   */
  public static Pod showingDevices(Pod pod) {
    var c = pod.getSpec().getContainers().get(0);
    c.setImage(RealNode.BUSYBOX);
    c.setImagePullPolicy("Never");
    c.setCommand(
        List.of(
            "sh",
            "-c",
            "env | sort; echo '--- /dev'; ls /dev; echo " + LISTED + "; exec sleep 2147483647"));
    // sleep as pid 1 ignores SIGTERM: a short grace period keeps deletions quick
    pod.getSpec().setTerminationGracePeriodSeconds(1L);
    return pod;
  }

  /** Waits until the pod runs and its container has printed {@link #LISTED}; its log. */
  public static List<String> awaitListed(Stack stack, Pod pod) {
    KubernetesClient client = stack.client;
    await()
        .atMost(POD_TIMEOUT)
        .untilAsserted(
            () -> assertThat(Dra.get(client, pod).getSpec().getNodeName()).as("bound").isNotNull());
    return awaitListed(
        client, stack.nodes.realNode(Dra.get(client, pod).getSpec().getNodeName()), pod);
  }

  /** As above, for a pod on {@code node}. */
  public static List<String> awaitListed(KubernetesClient client, RealNode node, Pod pod) {
    await()
        .atMost(POD_TIMEOUT)
        .untilAsserted(
            () -> {
              Pod current = Dra.get(client, pod);
              assertThat(current.getStatus().getPhase()).isEqualTo("Running");
              assertThat(node.containerLog(current, "app")).contains(LISTED);
            });
    return node.containerLog(Dra.get(client, pod), "app");
  }

  /** The CDI spec file of the claim on the node (the driver's naming). */
  public static Path spec(Stack stack, String node, ResourceClaim claim) {
    return spec(stack.nodes.cdiDir(node), Stack.DRIVER, claim);
  }

  /** The CDI spec file that {@code driver} writes for the claim into a node's {@code cdiDir}. */
  public static Path spec(Path cdiDir, String driver, ResourceClaim claim) {
    return cdiDir.resolve("k8s." + driver + "-claim_" + claim.getMetadata().getUid() + ".json");
  }

  /** The CDI spec files in the node's directory. */
  public static List<String> specFiles(Stack stack, String node) {
    return specFiles(stack.nodes.cdiDir(node));
  }

  /** The CDI spec files in {@code cdiDir}. */
  public static List<String> specFiles(Path cdiDir) {
    if (!Files.isDirectory(cdiDir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(cdiDir)) {
      return files
          .map(f -> f.getFileName().toString())
          .filter(f -> f.endsWith(".json"))
          .sorted()
          .toList();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The number of the allocated device ({@code gpu-<n>}) of a one-device claim. */
  public static int deviceIndex(ResourceClaim claim) {
    String device = Dra.devices(claim).get(0);
    return Integer.parseInt(device.substring(device.lastIndexOf('-') + 1));
  }

  /** Waits until the pod {@code namespace/name} has run to its end (Succeeded or Failed). */
  public static Pod awaitFinished(KubernetesClient client, String namespace, String name) {
    return client
        .pods()
        .inNamespace(namespace)
        .withName(name)
        .waitUntilCondition(
            p ->
                p != null
                    && p.getStatus() != null
                    && List.of("Succeeded", "Failed").contains(p.getStatus().getPhase()),
            POD_TIMEOUT.toSeconds(),
            java.util.concurrent.TimeUnit.SECONDS);
  }
}
