package io.kdra.it.karpenter;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Stack;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * What a launched machine brings up in a real cluster, for the Nodes Karpenter's KWOK provider
 * makes (it makes only the Node object): the node's kubelet reports it Ready, and the device-driver
 * of its instance type reports its devices, which the stack's publisher writes as ResourceSlices
 * ({@link Stack#addNode}); when Karpenter deletes the Node, both stop ({@link Stack#removeNode}).
 * One node at a time, in the order the Nodes come and go.
 */
public final class LaunchedNodes implements AutoCloseable {

  /** The label Karpenter puts on the nodes of its NodePools. */
  public static final String NODE_POOL_LABEL = "karpenter.sh/nodepool";

  private static final String INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type";

  /** The taint a Node of Karpenter's has until Karpenter registered it (its NodeClaim's). */
  private static final String UNREGISTERED = "karpenter.sh/unregistered";

  private final Stack stack;
  private final Map<String, Function<String, SimulatedNode>> inventories;
  private final ExecutorService worker = Executors.newSingleThreadExecutor();
  private final Set<String> running = ConcurrentHashMap.newKeySet();
  private final Set<String> everLaunched = ConcurrentHashMap.newKeySet();
  private final SharedIndexInformer<Node> informer;
  private volatile boolean closing;

  /**
   * @param inventories by instance type: the simulated node (its driver's inventory) of a node of
   *     that type, given the node's name
   */
  public LaunchedNodes(Stack stack, Map<String, Function<String, SimulatedNode>> inventories) {
    this.stack = stack;
    this.inventories = Map.copyOf(inventories);
    this.informer =
        stack
            .client
            .nodes()
            .withLabel(NODE_POOL_LABEL)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Node node) {
                    worker.execute(() -> launched(node));
                  }

                  @Override
                  public void onUpdate(Node old, Node node) {}

                  @Override
                  public void onDelete(Node node, boolean unknown) {
                    worker.execute(() -> gone(node.getMetadata().getName()));
                  }
                });
  }

  /** The launched nodes whose kubelet and driver run now. */
  public Set<String> running() {
    return Set.copyOf(running);
  }

  /** Every launched node whose kubelet and driver ran at some time, gone or not. */
  public Set<String> everLaunched() {
    return Set.copyOf(everLaunched);
  }

  private void launched(Node node) {
    String name = node.getMetadata().getName();
    String type = node.getMetadata().getLabels().get(INSTANCE_TYPE_LABEL);
    Function<String, SimulatedNode> inventory = inventories.get(type);
    if (inventory == null) {
      System.out.printf(
          "[karpenter] node %s of unknown instance type %s: left alone%n", name, type);
      return;
    }
    try {
      // as a DaemonSet's pod, the driver comes once Karpenter registered the node: until then
      // the node has the unregistered taint, NoExecute, which the driver's pod does not tolerate
      stack
          .client
          .nodes()
          .withName(name)
          .waitUntilCondition(n -> n == null || !unregistered(n), 120, TimeUnit.SECONDS);
      if (closing) {
        return;
      }
      stack.addNode(inventory.apply(name));
      running.add(name);
      everLaunched.add(name);
      System.out.printf("[karpenter] node %s (%s) runs its kubelet and driver%n", name, type);
    } catch (RuntimeException e) {
      if (closing) {
        return; // interrupted by closeNow
      }
      System.out.printf("[karpenter] node %s (%s) could not be brought up: %s%n", name, type, e);
    }
  }

  private static boolean unregistered(Node node) {
    return node.getSpec().getTaints() != null
        && node.getSpec().getTaints().stream().anyMatch(t -> t.getKey().equals(UNREGISTERED));
  }

  private void gone(String name) {
    // out of running() once its kubelet and driver stopped, not before
    if (running.contains(name)) {
      stack.removeNode(name);
      running.remove(name);
      System.out.printf("[karpenter] node %s is gone: its kubelet and driver stopped%n", name);
    }
  }

  /** No node is brought up any more; one being brought up now finishes first. */
  @Override
  public void close() {
    informer.close();
    worker.shutdown();
    awaitWorker();
  }

  /**
   * No node is brought up any more, and one being brought up now is interrupted: for a stack that
   * stops right after (whatever the interrupted start left, the stack's stop ends).
   */
  public void closeNow() {
    closing = true;
    informer.close();
    worker.shutdownNow();
    awaitWorker();
  }

  private void awaitWorker() {
    try {
      worker.awaitTermination(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
