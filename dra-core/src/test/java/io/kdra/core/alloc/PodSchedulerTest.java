package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatorCases.ANY_GPU;
import static io.kdra.core.alloc.AllocatorCases.MEM_40;
import static io.kdra.core.testing.AllocFixtures.DRIVER;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.device;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.firstAvailable;
import static io.kdra.core.testing.AllocFixtures.gpu;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static io.kdra.core.testing.AllocFixtures.sub;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.testing.Scenario;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Pod-level placement: node order, pod node constraints, claims together, explanations. */
class PodSchedulerTest {

  static final List<Node> NODES =
      List.of(
          node("node-c", "zone", "b"), node("node-a", "zone", "a"), node("node-b", "zone", "b"));

  /** node-a: one 16Gi GPU; node-b: one 40Gi GPU; node-c: two 40Gi GPUs, pool incomplete. */
  static Scenario cluster(ResourceClaim... existing) {
    return Scenario.of(
            slice("a", "node-a", gpu("g0", "T4", "16Gi", "p0")).build(),
            slice("b", "node-b", gpu("g0", "A100", "40Gi", "p0")).build(),
            slice("c1", "node-c", gpu("g0", "A100", "40Gi", "p0"), gpu("g1", "A100", "40Gi", "p0"))
                .withPool("node-c", 0, 2)
                .build())
        .withClasses(deviceClass("gpu", ANY_GPU), deviceClass("a100-40gb", ANY_GPU, MEM_40))
        .withExisting(existing);
  }

  static Pod pod(Map<String, String> nodeSelector) {
    return new PodBuilder()
        .withNewMetadata()
        .withName("p")
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .withNodeSelector(nodeSelector)
        .endSpec()
        .build();
  }

  static Arguments tc(
      String name,
      Scenario s,
      Pod pod,
      List<ResourceClaim> claims,
      String node,
      String... expected) {
    return arguments(named(name, s), pod, claims, node, List.of(expected));
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        tc(
            "first node by name where the claim fits",
            cluster(),
            null,
            List.of(claim("c", request("r", "gpu").build()).build()),
            "node-a",
            "r=gpu.example.com/node-a/g0"),
        tc(
            "class selector moves the claim to a later node",
            cluster(),
            null,
            List.of(claim("c", request("r", "a100-40gb").build()).build()),
            "node-b",
            "r=gpu.example.com/node-b/g0"),
        tc(
            "pod node selector excludes nodes",
            cluster(),
            pod(Map.of("zone", "b")),
            List.of(claim("c", request("r", "gpu").build()).build()),
            "node-b",
            "r=gpu.example.com/node-b/g0"),
        tc(
            "a pod's claims land on one node together",
            cluster(),
            null,
            List.of(
                claim("c1", request("r", "gpu").build()).build(),
                claim("c2", request("r", "gpu").build()).build()),
            null,
            "!request \"r\": 2 devices in class \"gpu\", 2 free; "
                + "enough free devices exist, but not on any one node for all of the pod's "
                + "claims; 3 nodes tried",
            "!request \"r\": 2 devices in class \"gpu\", 2 free; "
                + "enough free devices exist, but not on any one node for all of the pod's "
                + "claims; 3 nodes tried"),
        tc(
            "prioritized list scoring: a later node with the first choice beats the first node",
            cluster(),
            null,
            List.of(
                claim("c", firstAvailable("gpu", sub("a100", "a100-40gb", 1), sub("any", "gpu", 1)))
                    .build()),
            "node-b",
            "gpu/a100=gpu.example.com/node-b/g0"),
        tc(
            "prioritized list scoring: the first node when only fallbacks fit anywhere",
            cluster(
                claim("old", request("r", "gpu").build())
                    .withAllocated("gpu.example.com/node-b/g0")
                    .build()),
            null,
            List.of(
                claim("c", firstAvailable("gpu", sub("a100", "a100-40gb", 1), sub("any", "gpu", 1)))
                    .build()),
            "node-a",
            "gpu/any=gpu.example.com/node-a/g0"),
        // differential seed 45: the early stop of prioritized-list scoring evaluated selectors
        // cluster-wide and let the CEL error escape as an exception (dra-alloc exited 2);
        // upstream tries the next node, whose search hits the error and fails the pod
        tc(
            "prioritized list scoring: a selector error on a later node fails the pod",
            Scenario.of(
                    slice("a", "node-a", device("g0").withBool("mig", false).build()).build(),
                    slice("b", "node-b", device("g0").build()).build())
                .withClasses(
                    deviceClass("gpu", ANY_GPU),
                    deviceClass("mig", "device.attributes[\"" + DRIVER + "\"].mig")),
            null,
            List.of(
                claim("c", firstAvailable("gpu", sub("mig", "mig", 1), sub("any", "gpu", 1)))
                    .build()),
            null,
            "!request \"gpu/mig\": class mig: selector #0 on device gpu.example.com/node-b/g0: "
                + "CEL error: CEL expression failed to evaluate: no such key: mig (guard optional "
                + "attributes with has() or \"in\") (expression: device.attributes[\""
                + DRIVER
                + "\"].mig)"),
        // differential seed 45: the cluster-wide counts of a failed pod evaluated a selector on
        // a device no node's search reaches and let the CEL error escape (dra-alloc exited 2)
        // differential seed 2230: the same with the failing selector in another request of
        // the claim: node-a fits with the fallback, node-b's search for "mig" meets the error
        tc(
            "prioritized list scoring: an error in another request on a later node fails the pod",
            Scenario.of(
                    slice(
                            "a",
                            "node-a",
                            device("g0").withBool("mig", true).build(),
                            device("g1").build())
                        .build(),
                    slice("b", "node-b", device("g0").build()).build())
                .withClasses(
                    deviceClass("gpu", ANY_GPU),
                    deviceClass("mig", "device.attributes[\"" + DRIVER + "\"].mig"),
                    deviceClass("none", "false")),
            null,
            List.of(
                claim(
                        "c",
                        request("m", "mig").build(),
                        firstAvailable("gpu", sub("best", "none", 1), sub("any", "gpu", 1)))
                    .build()),
            null,
            "!request \"m\": class mig: selector #0 on device gpu.example.com/node-b/g0: CEL "
                + "error: CEL expression failed to evaluate: no such key: mig (guard optional "
                + "attributes with has() or \"in\") (expression: device.attributes[\""
                + DRIVER
                + "\"].mig)"),
        tc(
            "cluster-wide explanation leaves out counts when a selector fails on some device",
            Scenario.of(
                    slice("a", "node-a", device("g0").withBool("mig", true).build()).build(),
                    slice("z", "node-z", device("g0").build()).build())
                .withClasses(
                    deviceClass("gpu", ANY_GPU),
                    deviceClass("mig", "device.attributes[\"" + DRIVER + "\"].mig")),
            null,
            List.of(
                claim("c1", request("r", "mig").build()).build(),
                claim("c2", request("r", "gpu").build()).build()),
            null,
            "!enough free devices exist, but not on any one node for all of the pod's claims; 3 "
                + "nodes tried",
            "!request \"r\": 2 devices in class \"gpu\", 2 free; "
                + "enough free devices exist, but not on any one node for all of the pod's claims; "
                + "3 nodes tried"),
        // differential seed 275: a node whose only pool is incomplete was skipped as "certainly
        // full" before any search, so All went on to the next node; upstream's search on that
        // node reports the incomplete pool as an error that fails the pod
        tc(
            "All: an incomplete pool on an earlier node fails the pod",
            Scenario.of(
                    slice("a", "node-a", gpu("g0", "A100", "40Gi", "p0"))
                        .withPool("node-a", 0, 2)
                        .build(),
                    slice("b", "node-b", gpu("g0", "A100", "40Gi", "p0")).build())
                .withClasses(deviceClass("gpu", ANY_GPU)),
            null,
            List.of(claim("c", request("r", "gpu").withAll().build()).build()),
            null,
            "!request \"r\": asks for all devices, but resource pool gpu.example.com/node-a is "
                + "currently being updated (1 of 2 slices)"),
        tc(
            "no node matches the pod",
            cluster(),
            pod(Map.of("zone", "nowhere")),
            List.of(claim("c", request("r", "gpu").build()).build()),
            null,
            "!no node matches the pod's node name, node selector and required node affinity "
                + "(3 nodes)"),
        tc(
            "cluster-wide explanation in the documented format",
            cluster(
                claim("old", request("r", "gpu").build())
                    .withAllocated("gpu.example.com/node-b/g0")
                    .build()),
            null,
            List.of(claim("c", request("gpu", "gpu").withSelectors(MEM_40).build()).build()),
            null,
            "!request \"gpu\": 2 devices in class \"gpu\", 1 matches the request selectors"
                + ", 0 free (1 allocated to other claims); pool node-c incomplete "
                + "(1 of 2 slices)"),
        tc(
            "explanation notes nodes excluded by the pod",
            cluster(),
            pod(Map.of("zone", "a")),
            List.of(claim("c", request("r", "a100-40gb").build()).build()),
            null,
            "!request \"r\": 1 device in class \"a100-40gb\", "
                + "1 free; enough free devices exist, but not on any one node; 1 node tried; 2 of "
                + "3 nodes excluded by the pod's node selection"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void schedules(
      Scenario s, Pod pod, List<ResourceClaim> claims, String node, List<String> expected) {
    PodScheduler.Placement p = PodScheduler.schedule(s.allocator(), NODES, pod, claims);
    assertThat(p.node()).isEqualTo(node);
    assertThat(Scenario.brief(p.outcomes())).containsExactlyElementsOf(expected);
  }

  /**
   * A derived attribute is evaluated only inside a node's search, so the early stop of
   * prioritized-list scoring cannot know that a later node's search would fail on it: node-a
   * reaches the best score any node could (the first alternative fits nowhere), but upstream,
   * scoring every feasible node, meets the error on node-b and fails the pod.
   */
  @org.junit.jupiter.api.Test
  void derivedAttributeErrorOnALaterNodeFailsThePod() {
    var any = sub("any", "gpu", 1);
    io.kdra.core.model.NewerFields.setDerivedAttributes(
        any,
        List.of(
            new io.kdra.core.model.NewerFields.DerivedAttribute(
                "derived/n", "device.attributes[\"" + DRIVER + "\"].numa")));
    Scenario s =
        Scenario.of(
                slice("a", "node-a", device("g0").withInt("numa", 0).build()).build(),
                slice("b", "node-b", device("g0").build()).build())
            .withClasses(deviceClass("gpu", ANY_GPU), deviceClass("none", "false"))
            .withFeatures(AllocatorFeatures.defaults().withDerivedAttributes(true));
    ResourceClaim c =
        claim("c", firstAvailable("gpu", sub("best", "none", 1), any))
            .withConstraint("derived/n", "gpu")
            .build();
    PodScheduler.Placement p = PodScheduler.schedule(s.allocator(), NODES, null, List.of(c));
    assertThat(p.node()).isNull();
    assertThat(Scenario.brief(p.outcomes()).get(0))
        .startsWith("!")
        .contains("derived attribute derived/n on device gpu.example.com/node-b/g0")
        .contains("no such key: numa");
  }

  static io.fabric8.kubernetes.api.model.NodeSelector pinnedTo(String node) {
    return new io.fabric8.kubernetes.api.model.NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .addNewMatchField()
        .withKey("metadata.name")
        .withOperator("In")
        .withValues(node)
        .endMatchField()
        .endNodeSelectorTerm()
        .build();
  }

  static Stream<Arguments> allocatedClaimCases() {
    List<ResourceClaim> one = List.of(claim("c", request("r", "gpu").build()).build());
    return Stream.of(
        arguments(
            named(
                "an allocated claim pinned to node-b moves the new claim there",
                pinnedTo("node-b")),
            null,
            one,
            "node-b",
            List.of("r=gpu.example.com/node-b/g0")),
        arguments(
            named("an allocation usable on every node restricts nothing", null),
            null,
            one,
            "node-a",
            List.of("r=gpu.example.com/node-a/g0")),
        arguments(
            named("pinned to a node outside the pod's node selector: no node", pinnedTo("node-a")),
            pod(Map.of("zone", "b")),
            one,
            null,
            List.of(
                "!no node matches the pod's node name, node selector and required node "
                    + "affinity and the node selectors of its allocated claims (3 nodes)")),
        arguments(
            named(
                "pinned to a node whose devices are taken: the claim stays pending",
                pinnedTo("node-a")),
            null,
            List.of(claim("c", request("r", "a100-40gb").build()).build()),
            null,
            List.of(
                "!request \"r\": 1 device in class \"a100-40gb\", 1 free; enough free "
                    + "devices exist, but not on any one node; 1 node tried; 2 of 3 nodes excluded by "
                    + "the pod's node selection and its allocated claims")));
  }

  /** kube-scheduler filters nodes by the node selectors of the pod's allocated claims. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("allocatedClaimCases")
  void allocatedClaimsRestrictNodes(
      io.fabric8.kubernetes.api.model.NodeSelector allocated,
      Pod pod,
      List<ResourceClaim> claims,
      String node,
      List<String> expected) {
    java.util.List<io.fabric8.kubernetes.api.model.NodeSelector> selectors =
        new java.util.ArrayList<>();
    selectors.add(allocated); // null: an allocation without a node selector
    PodScheduler.Placement p =
        PodScheduler.schedule(cluster().allocator(), NODES, pod, claims, selectors);
    assertThat(p.node()).isEqualTo(node);
    assertThat(Scenario.brief(p.outcomes())).containsExactlyElementsOf(expected);
    for (Node n : NODES) {
      assertThat(PodScheduler.podFits(pod, n, selectors))
          .as(n.getMetadata().getName())
          .isEqualTo(
              PodScheduler.podFits(pod, n)
                  && (allocated == null
                      || allocated
                          .getNodeSelectorTerms()
                          .get(0)
                          .getMatchFields()
                          .get(0)
                          .getValues()
                          .contains(n.getMetadata().getName())));
    }
  }

  /**
   * The early stop's "does any selector fail somewhere" answer is memoized per inventory; pods
   * scheduled one after another against one inventory must get the same decisions as each would
   * alone, with the memo told apart by class selectors (the requests here have none of their own).
   */
  @org.junit.jupiter.api.Test
  void selectorErrorMemoKeepsDecisionsAcrossPodsOfOneInventory() {
    Allocator allocator =
        Scenario.of(
                slice("a", "node-a", device("g0").withBool("mig", false).build()).build(),
                slice("b", "node-b", device("g0").build()).build())
            .withClasses(
                deviceClass("gpu", ANY_GPU),
                deviceClass("mig", "device.attributes[\"" + DRIVER + "\"].mig"),
                deviceClass("none", "false"))
            .allocator();
    List<ResourceClaim> clean =
        List.of(
            claim("c", firstAvailable("gpu", sub("none", "none", 1), sub("any", "gpu", 1)))
                .build());
    List<ResourceClaim> failing =
        List.of(
            claim("c", firstAvailable("gpu", sub("mig", "mig", 1), sub("any", "gpu", 1))).build());
    String placed = "gpu/any=gpu.example.com/node-a/g0";
    String error =
        "!request \"gpu/mig\": class mig: selector #0 on device "
            + "gpu.example.com/node-b/g0: CEL error: CEL expression failed to evaluate: no such key: "
            + "mig (guard optional attributes with has() or \"in\") (expression: device.attributes[\""
            + DRIVER
            + "\"].mig)";
    for (int round = 0; round < 2; round++) {
      PodScheduler.Placement ok = PodScheduler.schedule(allocator, NODES, null, clean);
      assertThat(ok.node()).as("round %d", round).isEqualTo("node-a");
      assertThat(Scenario.brief(ok.outcomes())).containsExactly(placed);
      PodScheduler.Placement failed = PodScheduler.schedule(allocator, NODES, null, failing);
      assertThat(failed.node()).as("round %d", round).isNull();
      assertThat(Scenario.brief(failed.outcomes())).containsExactly(error);
    }
  }

  /**
   * The early stop's free-device count is kept per inventory and selector set, with the devices
   * found allocated skipped in later states: pods placed one after another against one inventory
   * (the first choice running out on the way), and a pod placed again from the start, must get the
   * decisions a fresh inventory gives each of them.
   */
  @org.junit.jupiter.api.Test
  void freeDeviceCountKeepsDecisionsAcrossPodsOfOneInventory() {
    List<io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice> slices =
        List.of(
            slice("a", "node-a", gpu("l0", "L4", "24Gi", "p0"), gpu("l1", "L4", "24Gi", "p0"))
                .build(),
            slice(
                    "b",
                    "node-b",
                    gpu("x0", "A100", "40Gi", "p0"),
                    gpu("l0", "L4", "24Gi", "p0"),
                    gpu("l1", "L4", "24Gi", "p0"))
                .build(),
            slice("c", "node-c", gpu("l0", "L4", "24Gi", "p0"), gpu("l1", "L4", "24Gi", "p0"))
                .build());
    InMemoryDeviceClassLister classes =
        InMemoryDeviceClassLister.of(
            deviceClass("a100", "device.attributes[\"" + DRIVER + "\"].model == \"A100\""),
            deviceClass("l4", "device.attributes[\"" + DRIVER + "\"].model == \"L4\""));
    List<Node> nodes = List.of(node("node-a"), node("node-b"), node("node-c"));
    AllocatorOptions options = AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "s");
    AllocationSnapshot start = AllocationSnapshot.of(slices, classes, AllocatedState.empty());
    AllocationSnapshot history = start;
    List<String> placed = new java.util.ArrayList<>();
    for (int pod = 0; pod < 6; pod++) {
      // pod 5 is the first pod again, placed from the start state after the others
      AllocationSnapshot from = pod == 5 ? start : history;
      List<ResourceClaim> claims =
          List.of(
              claim("c" + pod, firstAvailable("gpu", sub("a100", "a100", 1), sub("l4", "l4", 2)))
                  .build());
      PodScheduler.Placement p =
          PodScheduler.schedule(new Allocator(from, options), nodes, null, claims);
      AllocationSnapshot fresh = AllocationSnapshot.of(slices, classes, from.allocated());
      PodScheduler.Placement alone =
          PodScheduler.schedule(
              new Allocator(
                  fresh, AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "s")),
              nodes,
              null,
              claims);
      assertThat(p.node()).as("pod %d", pod).isEqualTo(alone.node());
      assertThat(Scenario.brief(p.outcomes()))
          .as("pod %d", pod)
          .isEqualTo(Scenario.brief(alone.outcomes()));
      placed.add(p.node());
      if (p.allocated() && pod < 5) {
        history =
            history.withAllocated(
                history.allocated().plus(((ClaimOutcome.Allocated) p.outcomes().get(0)).result()));
      }
    }
    assertThat(placed).containsExactly("node-b", "node-a", "node-b", "node-c", null, "node-b");
  }

  /** kube-scheduler's {@code nextStartNodeIndex}: the search starts where the caller says. */
  @ParameterizedTest(name = "start {0}: {1} after {2} nodes")
  @org.junit.jupiter.params.provider.CsvSource({
    "0, node-a, 1",
    "1, node-b, 1",
    "2, node-a, 2",
    "4, node-b, 1",
    "-1, node-a, 2"
  })
  void searchStartsAtTheGivenPositionAndWrapsAround(int start, String node, int examined) {
    // node-c's pool is incomplete: a search from it goes on to node-a
    PodScheduler.Placement p =
        PodScheduler.schedule(
            cluster().allocator(),
            NODES,
            null,
            List.of(claim("c", request("r", "gpu").build()).build()),
            List.of(),
            start);
    assertThat(p.node()).isEqualTo(node);
    assertThat(p.examined()).isEqualTo(examined);
  }

  /**
   * Pods placed one after another, each search starting where the last one stopped, go round the
   * nodes; nodes found full are jumped over on both sides of the wrap, and a full cluster is
   * reported after every node was tried.
   */
  @org.junit.jupiter.api.Test
  void rotatingStartGoesRoundTheNodesAndSkipsFullOnesAcrossTheWrap() {
    List<io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice> slices =
        List.of(
            slice("a", "node-a", gpu("g0", "L4", "24Gi", "p0")).build(),
            slice("b", "node-b", gpu("g0", "L4", "24Gi", "p0")).build(),
            slice("c", "node-c", gpu("g0", "L4", "24Gi", "p0")).build(),
            slice("d", "node-d", gpu("g0", "L4", "24Gi", "p0"), gpu("g1", "L4", "24Gi", "p0"))
                .build());
    InMemoryDeviceClassLister classes = InMemoryDeviceClassLister.of(deviceClass("gpu", ANY_GPU));
    List<Node> nodes = List.of(node("node-a"), node("node-b"), node("node-c"), node("node-d"));
    AllocatorOptions options = AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "s");
    AllocationSnapshot snapshot = AllocationSnapshot.of(slices, classes, AllocatedState.empty());
    int start = 1;
    List<String> placed = new java.util.ArrayList<>();
    for (int pod = 0; pod < 6; pod++) {
      PodScheduler.Placement p =
          PodScheduler.schedule(
              new Allocator(snapshot, options),
              nodes,
              null,
              List.of(claim("c" + pod, request("r", "gpu").build()).build()),
              List.of(),
              start);
      placed.add(p.node());
      start = (start + p.examined()) % nodes.size();
      if (p.allocated()) {
        snapshot =
            snapshot.withAllocated(
                snapshot.allocated().plus(((ClaimOutcome.Allocated) p.outcomes().get(0)).result()));
      } else {
        assertThat(p.examined()).isEqualTo(nodes.size());
      }
    }
    assertThat(placed).containsExactly("node-b", "node-c", "node-d", "node-a", "node-d", null);
  }

  @ParameterizedTest(name = "{0} nodes: score {1}")
  @org.junit.jupiter.params.provider.CsvSource({
    "10, 10",
    "99, 99",
    "100, 100",
    "1000, 420",
    "5000, 500",
    "10000, 500",
    "100000, 5000"
  })
  void scoresAsManyFeasibleNodesAsKubeScheduler(int nodes, int scored) {
    assertThat(ScoreBound.feasibleNodesToScore(nodes)).isEqualTo(scored);
  }
}
