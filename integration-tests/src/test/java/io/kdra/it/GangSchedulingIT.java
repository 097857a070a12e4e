package io.kdra.it;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.WorkloadApi;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Gangs with Kubernetes 1.37's Workload API (PodGroup, scheduling.k8s.io/v1beta1, turned on in the
 * test control plane, see {@link WorkloadApi}) on four simulated nodes with one GPU each: a gang
 * too big for the cluster waits holding nothing, while a four-pod gang lands whole beside it.
 */
@ExtendWith(ControlPlane.class)
class GangSchedulingIT {

  private static final List<String> NODES = List.of("gang-a", "gang-b", "gang-c", "gang-d");

  /**
   * With TopologyAwareWorkloadScheduling on in the claim-controller too, as kube-scheduler needs it
   * on to honour a PodGroup's topology constraint.
   */
  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes(l4s("gang-a", 1), l4s("gang-b", 1), l4s("gang-c", 1), l4s("gang-d", 1))
          .withProperties(
              Map.of(
                  "kdra.claim-controller.feature-gates", "TopologyAwareWorkloadScheduling=true"));

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void slicesPublished() {
    assumeThat(WorkloadApi.servedBy(ControlPlane.VERSION))
        .as("the Workload API is served from 1.37 on")
        .isTrue();
    stack = STACK.get();
    client = stack.client;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> NODES.forEach(n -> assertThat(Dra.publishedDevices(client, n)).isEqualTo(1)));
    client.resource(Dra.template(stack.namespace, "one-gpu", KdraChart.GPU_CLASS, 1)).create();
  }

  @AfterEach
  void noPodsLeft() {
    stack.deletePodsAndAwaitClaimsGone();
  }

  @Test
  void aFourPodGangLandsWholeWhileOneThatCannotFitWaitsHoldingNothing() {
    String ns = stack.namespace;
    // five pods of one GPU each on four GPUs: alone, four of them would run
    client.resource(GangMembers.podGroup(ns, "too-big", 5)).create();
    List<Pod> tooBig = members(ns, "too-big", 5);
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              for (Pod p : tooBig) {
                assertThat(unschedulableMessage(p))
                    .contains("pod group too-big: ")
                    .contains("pods minCount needs fit");
              }
            });
    assertHoldsNothing(tooBig);

    client.resource(GangMembers.podGroup(ns, "train", 4)).create();
    List<Pod> train = members(ns, "train", 4);
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () ->
                assertThat(train.stream().map(this::nodeOf).collect(Collectors.toSet()))
                    .containsExactlyInAnyOrderElementsOf(NODES));
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              for (Pod p : train) {
                assertThat(stack.nodes.kubelet(nodeOf(p)).prepared(Dra.get(client, p))).isNotNull();
              }
            });
    // the big gang still waits, and still holds nothing
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              for (Pod p : tooBig) {
                assertThat(unschedulableMessage(p))
                    .contains("pod group too-big: ")
                    .contains("pods minCount needs fit");
              }
            });
    assertHoldsNothing(tooBig);
  }

  /**
   * Pods created before their PodGroup wait (upstream's gangscheduling PreEnqueue words) without a
   * claim of their own, and land once the group is created: the claim-controller watches PodGroups.
   */
  @Test
  void membersCreatedBeforeTheirPodGroupWaitWithoutClaimsAndLandOnceItExists() {
    String ns = stack.namespace;
    List<Pod> early = members(ns, "late", 2);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              for (Pod p : early) {
                assertThat(unschedulableMessage(p))
                    .contains(
                        "waiting for pods's pod group \"late\" to appear in scheduling queue");
              }
            });
    assertThat(client.resources(ResourceClaim.class).inNamespace(ns).list().getItems())
        .as("no claim is made for a pod whose PodGroup does not exist")
        .isEmpty();

    client.resource(GangMembers.podGroup(ns, "late", 2)).create();

    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              for (Pod p : early) {
                assertThat(nodeOf(p)).as(p.getMetadata().getName()).isNotNull();
              }
            });
  }

  /**
   * A gang of two with a topology key lands in one rack: by name the first two free nodes are in
   * different racks. The PodGroup's {@code schedulingConstraints} is kept by the API server only
   * with TopologyAwareWorkloadScheduling on, and honoured by the claim-controller only with its own
   * gate on (see {@link #STACK}).
   */
  @Test
  void aGangWithATopologyKeyLandsInOneRack() {
    String ns = stack.namespace;
    Map<String, String> racks = Map.of("gang-a", "r1", "gang-b", "r2", "gang-c", "r2");
    racks.forEach(
        (node, rack) ->
            client
                .nodes()
                .withName(node)
                .edit(
                    n -> {
                      n.getMetadata().getLabels().put(RACK, rack);
                      return n;
                    }));
    try {
      GenericKubernetesResource group = GangMembers.podGroup(ns, "ring", 2);
      @SuppressWarnings("unchecked")
      Map<String, Object> spec = new java.util.HashMap<>((Map<String, Object>) group.get("spec"));
      spec.put("schedulingConstraints", Map.of("topology", List.of(Map.of("key", RACK))));
      group.setAdditionalProperty("spec", spec);
      client.resource(group).create();
      List<Pod> ring = members(ns, "ring", 2);
      await()
          .atMost(Duration.ofSeconds(90))
          .untilAsserted(
              () ->
                  assertThat(ring.stream().map(this::nodeOf).toList())
                      .containsExactlyInAnyOrder("gang-b", "gang-c"));
    } finally {
      racks
          .keySet()
          .forEach(
              node ->
                  client
                      .nodes()
                      .withName(node)
                      .edit(
                          n -> {
                            n.getMetadata().getLabels().remove(RACK);
                            return n;
                          }));
    }
  }

  /**
   * A PodGroup's own claim (DRAWorkloadResourceClaims): made once from the group's template, owned
   * by the group and recorded in its status by a server-side apply; allocated once, reserved for
   * the group; both members land where its GPU is (three other nodes have a free one) and both are
   * prepared with it. Deleting the group, then the pods, deletes the claim.
   */
  @Test
  void aPodGroupsClaimIsAllocatedOnceAndSharedByItsMembers() {
    String ns = stack.namespace;
    GenericKubernetesResource group = GangMembers.podGroup(ns, "shared", 2);
    @SuppressWarnings("unchecked")
    Map<String, Object> spec = new java.util.HashMap<>((Map<String, Object>) group.get("spec"));
    spec.put(
        "resourceClaims", List.of(Map.of("name", "gpu", "resourceClaimTemplateName", "one-gpu")));
    group.setAdditionalProperty("spec", spec);
    String uid = client.resource(group).create().getMetadata().getUid();
    try {
      List<Pod> members = members(ns, "shared", 2);
      await()
          .atMost(Duration.ofSeconds(90))
          .untilAsserted(
              () -> {
                assertThat(nodeOf(members.get(0))).isNotNull();
                assertThat(nodeOf(members.get(1))).isEqualTo(nodeOf(members.get(0)));
              });
      List<ResourceClaim> claims =
          client.resources(ResourceClaim.class).inNamespace(ns).list().getItems();
      assertThat(claims).as("one claim, the group's; none of the members' own").hasSize(1);
      ResourceClaim shared = claims.get(0);
      assertThat(shared.getMetadata().getName()).startsWith("shared-gpu-");
      assertThat(shared.getMetadata().getOwnerReferences())
          .singleElement()
          .satisfies(
              o -> {
                assertThat(o.getKind()).isEqualTo("PodGroup");
                assertThat(o.getUid()).isEqualTo(uid);
              });
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                ResourceClaim c =
                    client
                        .resources(ResourceClaim.class)
                        .inNamespace(ns)
                        .withName(shared.getMetadata().getName())
                        .get();
                assertThat(c.getStatus().getAllocation()).isNotNull();
                assertThat(c.getStatus().getReservedFor())
                    .singleElement()
                    .satisfies(
                        r -> {
                          assertThat(r.getApiGroup()).isEqualTo("scheduling.k8s.io");
                          assertThat(r.getResource()).isEqualTo("podgroups");
                          assertThat(r.getName()).isEqualTo("shared");
                          assertThat(r.getUid()).isEqualTo(uid);
                        });
              });
      GenericKubernetesResource stored =
          client
              .genericKubernetesResources("scheduling.k8s.io/v1beta1", "PodGroup")
              .inNamespace(ns)
              .withName("shared")
              .get();
      assertThat((Object) stored.get("status"))
          .isEqualTo(
              Map.of(
                  "resourceClaimStatuses",
                  List.of(
                      Map.of("name", "gpu", "resourceClaimName", shared.getMetadata().getName()))));
      assertThat(stored.getMetadata().getManagedFields())
          .anySatisfy(
              m -> {
                assertThat(m.getManager()).isEqualTo("kdra-resourceclaim-controller");
                assertThat(m.getOperation()).isEqualTo("Apply");
                assertThat(m.getSubresource()).isEqualTo("status");
              });
      await()
          .atMost(Duration.ofSeconds(60))
          .untilAsserted(
              () -> {
                for (Pod p : members) {
                  assertThat(stack.nodes.kubelet(nodeOf(p)).prepared(Dra.get(client, p)))
                      .as("%s prepared", p.getMetadata().getName())
                      .isNotNull();
                }
              });
    } finally {
      // gone for good: the API server's admission gives PodGroups a protection finalizer that
      // kube-controller-manager removes once no pod uses the group, and this stack runs none.
      // The pods' deletion (after this test) then brings the group's claim to its cleanup.
      client.resource(group).delete();
      client
          .genericKubernetesResources("scheduling.k8s.io/v1beta1", "PodGroup")
          .inNamespace(ns)
          .withName("shared")
          .edit(
              g -> {
                g.getMetadata().setFinalizers(List.of());
                return g;
              });
    }
  }

  private static final String RACK = "topology.kubernetes.io/rack";

  private void assertHoldsNothing(List<Pod> gang) {
    Set<String> uids =
        gang.stream()
            .map(p -> Dra.get(client, p).getMetadata().getUid())
            .collect(Collectors.toSet());
    for (Pod p : gang) {
      assertThat(Dra.get(client, p).getSpec().getNodeName()).as(p.getMetadata().getName()).isNull();
    }
    for (ResourceClaim c :
        client.resources(ResourceClaim.class).inNamespace(stack.namespace).list().getItems()) {
      boolean ownedByGang =
          c.getMetadata().getOwnerReferences().stream().anyMatch(o -> uids.contains(o.getUid()));
      if (ownedByGang) {
        assertThat(c.getStatus() == null ? null : c.getStatus().getAllocation())
            .as("allocation of %s", c.getMetadata().getName())
            .isNull();
      }
    }
  }

  /**
   * The guide's complete job (docs/user/gang-scheduling.md: Workload, PodGroup, claim template,
   * pods), applied as it is written: the 1.37 API server accepts every object, and the gang lands
   * whole, each pod on a node of its own.
   */
  @Test
  void theGuidesCompleteJobIsAcceptedAndLandsWhole() throws IOException {
    String ns = stack.namespace;
    List<HasMetadata> objects =
        client.load(new ByteArrayInputStream(guideJob().getBytes(StandardCharsets.UTF_8))).items();
    assertThat(objects.stream().map(HasMetadata::getKind))
        .containsExactly("Workload", "PodGroup", "ResourceClaimTemplate", "Pod", "Pod");
    List<Pod> pods = new ArrayList<>();
    try {
      for (HasMetadata o : objects) {
        o.getMetadata().setNamespace(ns);
        if (o instanceof ResourceClaimTemplate) {
          // this class's own template of the same name is replaced by the guide's
          client.resource(o).inNamespace(ns).delete();
          await()
              .atMost(Duration.ofSeconds(30))
              .until(() -> client.resource(o).inNamespace(ns).get() == null);
        }
        HasMetadata created = client.resource(o).inNamespace(ns).create();
        if (created instanceof Pod p) {
          pods.add(p);
        }
      }
      await()
          .atMost(Duration.ofSeconds(90))
          .untilAsserted(
              () -> {
                List<String> nodes = pods.stream().map(this::nodeOf).toList();
                assertThat(nodes).doesNotContainNull().doesNotHaveDuplicates().hasSize(2);
              });
    } finally {
      GangMembers.podGroups(client, ns).withName("llm-train-workers").delete();
      client
          .genericKubernetesResources("scheduling.k8s.io/v1beta1", "Workload")
          .inNamespace(ns)
          .withName("llm-train")
          .delete();
    }
  }

  /** The YAML block of the guide's section "A complete job". */
  private static String guideJob() throws IOException {
    String guide = Files.readString(Path.of("..", "docs", "user", "gang-scheduling.md"));
    int section = guide.indexOf("## A complete job");
    assertThat(section).as("the guide's section").isNotNegative();
    String open = "```yaml\n";
    int start = guide.indexOf(open, section) + open.length();
    return guide.substring(start, guide.indexOf("```", start));
  }

  private String nodeOf(Pod p) {
    Pod current = Dra.get(client, p);
    return current == null ? null : current.getSpec().getNodeName();
  }

  private String unschedulableMessage(Pod p) {
    Pod current = Dra.get(client, p);
    if (current.getStatus() == null || current.getStatus().getConditions() == null) {
      return "";
    }
    return current.getStatus().getConditions().stream()
        .filter(c -> "PodScheduled".equals(c.getType()) && "False".equals(c.getStatus()))
        .map(PodCondition::getMessage)
        .findFirst()
        .orElse("");
  }

  private List<Pod> members(String ns, String group, int count) {
    List<Pod> pods = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      pods.add(client.resource(GangMembers.member(ns, group, i, "one-gpu")).create());
    }
    return pods;
  }
}
