package io.kdra.it.nodes;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.util.Map;
import java.util.function.Supplier;

/** Node objects as a kubelet registers them, for stacks and benchmarks without a real kubelet. */
public final class NodeRegistration {

  /**
   * Label on the Nodes and cluster-scoped objects tests create (value: the stack's namespace, or
   * {@code real-node}), so that they are removed afterwards.
   */
  public static final String TEST_LABEL = "e2e.kdra.io/test";

  private NodeRegistration() {}

  /**
   * Creates the Node {@code node} as a kubelet registers it (its hostname label and {@code
   * labels}): Ready, with allocatable cpu, memory and pods, without the not-ready taint.
   */
  public static void register(KubernetesClient client, String node, Map<String, String> labels) {
    client
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(node)
                .addToLabels("kubernetes.io/hostname", node)
                .addToLabels(labels)
                .endMetadata()
                .build())
        .create();
    markReady(client, node);
  }

  /**
   * What a kubelet posts for its Node once it runs: Ready, with allocatable cpu, memory and pods
   * (those the Node already has are kept: a cloud provider may have set them), and without the
   * not-ready taint. For Nodes made by someone else too (Karpenter's KWOK provider makes them
   * without a kubelet).
   */
  public static void markReady(KubernetesClient client, String node) {
    Map<String, Quantity> resources =
        Map.of(
            "cpu", new Quantity("8"), "memory", new Quantity("32Gi"), "pods", new Quantity("110"));
    // kube-controller-manager, where it runs, writes new Nodes too (taints, annotations): each
    // edit is retried on a conflict
    onConflictRetry(
        () ->
            client
                .nodes()
                .withName(node)
                .editStatus(
                    n -> {
                      Map<String, Quantity> capacity = new java.util.LinkedHashMap<>(resources);
                      Map<String, Quantity> allocatable = new java.util.LinkedHashMap<>(resources);
                      if (n.getStatus() != null) {
                        if (n.getStatus().getCapacity() != null) {
                          capacity.putAll(n.getStatus().getCapacity());
                        }
                        if (n.getStatus().getAllocatable() != null) {
                          allocatable.putAll(n.getStatus().getAllocatable());
                        }
                      }
                      n.setStatus(
                          new NodeStatusBuilder()
                              .withCapacity(capacity)
                              .withAllocatable(allocatable)
                              .withConditions(
                                  new NodeConditionBuilder()
                                      .withType("Ready")
                                      .withStatus("True")
                                      .withReason("KubeletReady")
                                      .withMessage("kubelet is posting ready status")
                                      .withLastHeartbeatTime(Instant.now().toString())
                                      .withLastTransitionTime(Instant.now().toString())
                                      .build())
                              .build());
                      return n;
                    }));
    // the API server's TaintNodesByCondition admission taints every new Node not-ready; the
    // node lifecycle controller (kube-controller-manager, absent by default) lifts it once Ready
    onConflictRetry(
        () ->
            client
                .nodes()
                .withName(node)
                .edit(
                    n -> {
                      if (n.getSpec().getTaints() != null) {
                        n.getSpec()
                            .getTaints()
                            .removeIf(t -> t.getKey().equals("node.kubernetes.io/not-ready"));
                      }
                      return n;
                    }));
  }

  /** Runs {@code write} again (it re-reads) while the API server answers 409 Conflict. */
  public static <T> T onConflictRetry(Supplier<T> write) {
    for (int attempt = 1; ; attempt++) {
      try {
        return write.get();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt >= 10) {
          throw e;
        }
      }
    }
  }
}
