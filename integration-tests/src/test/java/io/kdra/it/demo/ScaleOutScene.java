package io.kdra.it.demo;

import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.it.karpenter.KarpenterKwok;
import io.kdra.it.karpenter.ScaleOutScenario;
import io.kdra.it.services.Stack;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * {@code bin/demo --scale-out}: issue 46's story told step by step on a cluster with no node yet
 * ({@link ScaleOutScenario}, which {@code KarpenterScaleOutIT} tests): Karpenter starts, the
 * ComputeClass "1 x A100, else 2 x L4" gets its template and NodePools, a Deployment of three
 * replicas waits, Karpenter launches an A100 node for each and each pod gets its A100; A100
 * capacity is withdrawn and two more replicas get L4 nodes with two L4s each; scaled to zero, the
 * nodes go with their slices and claims.
 */
final class ScaleOutScene implements AutoCloseable {

  /** Karpenter's launches and removals take a few of its batch and disruption rounds each. */
  private static final long TIMEOUT_MS = 300_000;

  private final DemoSteps steps;
  private final Stack stack;
  private final String logs;
  private ScaleOutScenario scenario;
  private boolean closed;

  ScaleOutScene(DemoSteps steps, Stack stack, String logs) {
    this.steps = steps;
    this.stack = stack;
    this.logs = logs + ", Karpenter's in its karpenter.log";
  }

  void run() {
    steps.step(
        "starting Karpenter "
            + KarpenterKwok.VERSION
            + " with its KWOK provider (kdra-karpenter-kwok), which can launch two instance types: "
            + ScaleOutScenario.A100_TYPE
            + " (one A100 40Gi, $1/h) and "
            + ScaleOutScenario.L4_TYPE
            + " (two L4 24Gi, $2/h); nodes now: "
            + nodeCount());
    started(ScaleOutScenario.start(stack));
    steps.step(
        "created ComputeClass "
            + ScaleOutScenario.COMPUTE_CLASS_NAME
            + ": 1 x nvidia-tesla-a100, else 2 x nvidia-l4");
    await("the bridge's template and NodePools, Ready in Karpenter", scenario::bridgeReady);
    steps.step(
        "the bridge made ResourceClaimTemplate "
            + Demo.NAMESPACE
            + "/"
            + ScaleOutScenario.COMPUTE_CLASS_NAME
            + " (one A100, else two L4s) and a Karpenter NodePool per priority: "
            + ScaleOutScenario.A100_NODE_POOL
            + " (weight 100), "
            + ScaleOutScenario.L4_NODE_POOL
            + " (weight 99)");

    scenario.createDeployment(3);
    await("3 pods of Deployment " + ScaleOutScenario.APP, () -> scenario.pods().size() == 3);
    long pending = scenario.pods().stream().filter(p -> p.getSpec().getNodeName() == null).count();
    steps.step(
        "created Deployment "
            + ScaleOutScenario.APP
            + ", 3 replicas whose claim comes from that template: "
            + pending
            + " of 3 pods Pending, nodes: "
            + nodeCount()
            + "; Karpenter launches what they need");
    await(
        "3 pods on A100 nodes, each with its node's A100",
        () -> allRunWith(scenario.pods(), 3, ScaleOutScenario.A100_TYPE, 1));
    steps.step(
        "Karpenter launched "
            + scenario.nodesOf(ScaleOutScenario.A100_TYPE).size()
            + " "
            + ScaleOutScenario.A100_TYPE
            + " nodes (the first priority's NodePool); each pod is bound to one with its A100,"
            + " prepared by the node's kubelet:");
    table();

    Set<String> before =
        scenario.pods().stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet());
    scenario.noA100Capacity();
    scenario.scale(5);
    steps.step(
        "A100 capacity withdrawn (Karpenter's provider has no "
            + ScaleOutScenario.A100_TYPE
            + " machine left); scaled "
            + ScaleOutScenario.APP
            + " to 5 replicas");
    await(
        "2 more pods on L4 nodes, each with its node's two L4s",
        () -> {
          List<Pod> pods = scenario.pods();
          List<Pod> next =
              pods.stream().filter(p -> !before.contains(p.getMetadata().getName())).toList();
          return pods.size() == 5 && allRunWith(next, 2, ScaleOutScenario.L4_TYPE, 2);
        });
    steps.step(
        "Karpenter launched "
            + scenario.nodesOf(ScaleOutScenario.L4_TYPE).size()
            + " "
            + ScaleOutScenario.L4_TYPE
            + " nodes (the fallback's NodePool); each new pod got both L4s of its node:");
    table();

    int launched = scenario.launched().everLaunched().size();
    scenario.scale(0);
    steps.step("scaled " + ScaleOutScenario.APP + " to 0 replicas");
    await(
        "the pods, their claims, Karpenter's nodes and their slices gone",
        () -> scenario.allGone() && scenario.launched().running().isEmpty());
    steps.step(
        "pods and claims gone; Karpenter removed the "
            + launched
            + " empty nodes, and their drivers' ResourceSlices went with them; nodes now: "
            + nodeCount());
  }

  private synchronized void started(ScaleOutScenario s) {
    if (closed) {
      s.close();
      throw new IllegalStateException("stopped while Karpenter started");
    }
    scenario = s;
  }

  /** The nodes of the cluster now, Karpenter's or not (none at first). */
  private int nodeCount() {
    return stack.client.nodes().list().getItems().size();
  }

  /**
   * {@code count} pods, each bound to a node of {@code type} with {@code devices} of its devices
   * for that priority's subrequest, prepared.
   */
  private boolean allRunWith(List<Pod> pods, int count, String type, int devices) {
    String request =
        type.equals(ScaleOutScenario.A100_TYPE)
            ? ScaleOutScenario.A100_REQUEST
            : ScaleOutScenario.L4_REQUEST;
    return pods.size() == count
        && pods.stream().allMatch(p -> scenario.placement(p).runsWith(type, request, devices))
        && pods.stream().map(p -> p.getSpec().getNodeName()).distinct().count() == count;
  }

  private void table() {
    DemoReport.placements(
            scenario.pods().stream()
                .sorted(
                    Comparator.comparing((Pod p) -> p.getMetadata().getCreationTimestamp())
                        .thenComparing(p -> p.getMetadata().getName()))
                .map(scenario::placement)
                .toList())
        .forEach(System.out::println);
  }

  private void await(String what, BooleanSupplier condition) {
    steps.await(what, TIMEOUT_MS, logs, condition);
  }

  /** Karpenter stops, and with it the bringing up of its nodes (the cluster stops them). */
  @Override
  public synchronized void close() {
    closed = true;
    if (scenario != null) {
      scenario.close();
    }
  }
}
