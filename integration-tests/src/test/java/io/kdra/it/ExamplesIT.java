package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.examples.ExampleApply;
import io.kdra.it.examples.ExampleCluster;
import io.kdra.it.examples.ExampleFolder;
import io.kdra.it.examples.ReplicaNames;
import io.kdra.it.services.Stack;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every scenario in {@code examples/} applied as a user applies it ({@code kubectl apply -f
 * examples/<x>/}) on a cluster running kdra, with the outcome its README states: the lines {@code
 * bin/dra-alloc -o summary} prints, which {@code ExampleReadmesTest} checks against the command.
 *
 * <p>The cluster: the real API server with kube-controller-manager and kube-scheduler ({@link
 * Stack} with the full control plane), the four services, and simulated nodes that are the
 * example's {@code cluster/cluster.yaml} (each slice's devices become that node's simulated
 * inventory, and the test first checks that the driver publishes exactly those devices, so the file
 * is what a cluster running kdra shows). The claim-controller runs with the chart's default
 * template mode ({@code template-mode} unset: {@code adopt}), so kube-controller-manager's
 * resourceclaim controller makes the claims of templates, as on any cluster, and its Deployment,
 * ReplicaSet and Job controllers make the workloads' pods. Where an example has a ComputeClass, its
 * stack runs the computeclass-bridge, and the objects the example labels as the bridge's are not
 * created: the bridge's are awaited and must equal them. One stack per cluster file, examples in
 * name order.
 *
 * <p>The objects are created as written, in file order ({@link ExampleApply}), and nothing else: no
 * status is written (a user's {@code kubectl apply} cannot set one; helm-tests' {@code
 * ExampleApplyTest} keeps statuses out of the examples). The test adds one thing a user does not
 * do: after a pod, or a workload, it waits until the pod, or all the workload's pods, are bound
 * before the next object. dra-alloc places pods in input order, and where two pods of an example
 * want the same devices (memory-filter, computeclass-fallback, a100-or-2xl4) which one gets which
 * depends on that order; applied at once, a cluster may place them the other way round
 * (a100-or-2xl4's README, whose story is that order, has the user wait between its two files).
 *
 * <p>What a real controller legitimately changes is left out of the comparison, nothing else: the
 * ReplicaSet and Job controllers name a workload's pods with random suffixes and create them at
 * once, so they are placed in no particular order, and kube-controller-manager names template
 * claims {@code <pod>-<entry>-<random>}. A template claim is named back as dra-alloc names it,
 * {@code <pod>-<entry>}, from the pod's {@code status.resourceClaimStatuses}; a workload's pods are
 * found by their controller references (a Deployment's through its ReplicaSet) and each of their
 * claims becomes {@code <workload>-*-<entry>}, in the README's lines too ({@link ReplicaNames}).
 * The lines are then compared as multisets: every workload must have exactly as many pods as
 * dra-alloc runs, each bound, and their claims the same devices on the same nodes as dra-alloc's,
 * only not tied to a replica's index. That is exact for the examples, whose workloads' pods are
 * alike: whichever replica is placed first gets what dra-alloc's first gets (gpu-time-slicing: four
 * shares of gpu-0 and four of gpu-1; mig-3g40gb-job: the two 3g.40gb placements;
 * whole-gpus-same-job: one GPU of each node). A pod left unbound fails the test with its {@code
 * PodScheduled} condition, which says why.
 */
@ExtendWith(ControlPlane.class)
class ExamplesIT {

  private static final Path EXAMPLES = Path.of("..", "examples");

  /** What the cluster files' comments say the driver runs with. */
  private static final Map<String, Map<String, String>> DRIVER_PROPERTIES =
      Map.of(
          "gpu-time-slicing",
          Map.of(
              "kdra.device-driver.sharing.strategy", "time-slicing",
              "kdra.device-driver.sharing.shares", "4"),
          "mig-3g40gb-job",
          Map.of("kdra.device-driver.mig-mode", "dynamic"));

  private static final List<Stack> OPEN = new ArrayList<>();

  @AfterAll
  static void closeStacks() {
    OPEN.forEach(Stack::close);
    OPEN.clear();
  }

  @TestFactory
  Stream<DynamicNode> everyExampleHasItsReadmesOutcome(ControlPlane.Running cp) throws IOException {
    Map<Path, List<ExampleFolder>> byCluster = new TreeMap<>();
    for (ExampleFolder example : ExampleFolder.all(EXAMPLES)) {
      byCluster.computeIfAbsent(example.clusterFile(), k -> new ArrayList<>()).add(example);
    }
    assertThat(byCluster).isNotEmpty();
    List<DynamicNode> nodes = new ArrayList<>();
    for (Map.Entry<Path, List<ExampleFolder>> group : byCluster.entrySet()) {
      ExampleCluster cluster = new ExampleCluster(group.getKey());
      List<ExampleFolder> examples = group.getValue();
      String name = cluster.name(EXAMPLES);
      Stack[] stack = new Stack[1];
      List<DynamicTest> tests = new ArrayList<>();
      tests.add(
          DynamicTest.dynamicTest(
              "the driver publishes " + name + "/" + ExampleFolder.CLUSTER_FILE,
              () -> {
                stack[0] = start(cp, cluster, name, examples);
                cluster.assertPublished(stack[0].client);
              }));
      for (int i = 0; i < examples.size(); i++) {
        ExampleFolder example = examples.get(i);
        boolean last = i == examples.size() - 1;
        tests.add(
            DynamicTest.dynamicTest(
                example.name(),
                () -> {
                  try {
                    assertThat(stack[0]).as("the stack of " + name).isNotNull();
                    assertThat(ExampleApply.outcome(stack[0], example))
                        .as("%s on the real stack, as its README says", example.name())
                        .containsExactlyInAnyOrderElementsOf(example.readmeOutcomeForAnyReplica());
                  } finally {
                    if (stack[0] != null) {
                      ExampleApply.cleanUp(stack[0]);
                      if (last) {
                        OPEN.remove(stack[0]);
                        stack[0].close();
                      }
                    }
                  }
                }));
      }
      nodes.add(DynamicContainer.dynamicContainer(name + "/" + ExampleFolder.CLUSTER_FILE, tests));
    }
    return nodes.stream();
  }

  /**
   * The stack of one cluster file, on the full control plane; the claim-controller's template mode
   * is the chart's default (the stack sets none where kube-controller-manager runs).
   */
  private static Stack start(
      ControlPlane.Running cp, ExampleCluster cluster, String name, List<ExampleFolder> examples)
      throws IOException {
    Map<String, String> properties = new LinkedHashMap<>();
    boolean bridge = false;
    for (ExampleFolder example : examples) {
      properties.putAll(DRIVER_PROPERTIES.getOrDefault(example.name(), Map.of()));
      bridge |= example.declaresComputeClass();
    }
    Stack stack =
        Stack.start(
            cp.client(),
            cp.server().getKubeConfigYaml(),
            "examples-" + name,
            cluster.nodes(),
            bridge ? 1 : 0,
            1,
            properties,
            false,
            cp);
    OPEN.add(stack);
    return stack;
  }
}
