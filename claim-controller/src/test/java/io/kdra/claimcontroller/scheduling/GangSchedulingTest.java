package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.SchedulerFeatures;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ApiPodGroups;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodGroups;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.testing.AllocFixtures;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pods of a PodGroup with a gang policy, end to end against the fabric8 mock API server with the
 * real allocator: one GPU per node, one claim per pod. A gang lands whole or not at all, and one
 * that cannot land holds nothing.
 */
@EnableKubernetesMockClient(crud = true)
class GangSchedulingTest {

  KubernetesClient client;
  final Map<String, PodGroupPolicy> groups = new HashMap<>();

  final PodBinder binder =
      (pod, node) ->
          client
              .pods()
              .inNamespace(NS)
              .withName(pod.getMetadata().getName())
              .edit(p -> new PodBuilder(p).editSpec().withNodeName(node).endSpec().build());

  /** Runs before each device search, with the pod searched for. */
  volatile java.util.function.Consumer<Pod> beforeSearch = p -> {};

  PodScheduling scheduling() {
    return scheduling((namespace, name) -> Optional.ofNullable(groups.get(name)));
  }

  /** With TopologyAwareWorkloadScheduling on: the topology tests here place groups in one rack. */
  PodScheduling scheduling(PodGroups podGroups) {
    return scheduling(podGroups, new SchedulerFeatures(true));
  }

  PodScheduling scheduling(PodGroups podGroups, SchedulerFeatures features) {
    PodAllocator real =
        new DraCorePodAllocator(
            AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "share"));
    PodAllocator allocator =
        (pod, candidates, unallocated, allocated, view, deadline) -> {
          beforeSearch.accept(pod);
          return real.allocate(pod, candidates, unallocated, allocated, view, deadline);
        };
    PodScheduling s =
        new PodScheduling(
            new ApiView(client),
            new RecentWrites(),
            new PodScheduling.Writers(
                new ClaimWriter(client, K.SCHEDULER, 3),
                new PodWriter(client, 3, Clock.systemUTC()),
                binder,
                new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
            allocator,
            PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP));
    s.placeGangsWith(podGroups, features);
    return s;
  }

  /** A ready node with one GPU, labelled {@code rack=<rack>}. */
  void gpuNode(String name, String rack) {
    client
        .nodes()
        .resource(
            new NodeBuilder(K.readyNode(name))
                .editMetadata()
                .addToLabels("rack", rack)
                .endMetadata()
                .build())
        .create();
    client
        .resource(
            AllocFixtures.slice(name + "-gpu", name, AllocFixtures.device("gpu-0").build()).build())
        .create();
  }

  /**
   * Pod {@code name} with its own one-GPU claim, a member of PodGroup {@code group} if not null.
   */
  Pod pod(String name, String group) {
    ResourceClaim claim =
        AllocFixtures.claim(name + "-gpu", AllocFixtures.request("gpu", "gpu").build()).build();
    claim.getMetadata().setNamespace(NS);
    client.resource(claim).create();
    Pod p = K.podWithClaim(name, "gpu", name + "-gpu");
    if (group != null) {
      p.getSpec().setAdditionalProperty("schedulingGroup", Map.of("podGroupName", group));
    }
    return client.resource(p).create();
  }

  Pod get(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }

  String nodeOf(String name) {
    return get(name).getSpec().getNodeName();
  }

  boolean allocated(String pod) {
    ResourceClaim c =
        client.resources(ResourceClaim.class).inNamespace(NS).withName(pod + "-gpu").get();
    return c.getStatus() != null && c.getStatus().getAllocation() != null;
  }

  void setUpClasses() {
    client.resource(AllocFixtures.deviceClass("gpu")).create();
  }

  @Test
  void aFourPodGangWaitsForItsFourthMemberThenLandsWhole() {
    setUpClasses();
    for (String n : new String[] {"node-a", "node-b", "node-c", "node-d"}) {
      gpuNode(n, "r1");
    }
    groups.put("train", new PodGroupPolicy("train", 4, null));
    PodScheduling scheduling = scheduling();
    for (int i = 0; i < 3; i++) {
      Outcome o = scheduling.schedule(pod("w" + i, "train"));
      assertThat(o)
          .isEqualTo(
              new Outcome.Unschedulable(
                  GangScheduling.WAITING_FOR_MEMBERS, Map.of(), "GangIncomplete"));
    }
    assertThat(nodeOf("w0")).isNull();

    Outcome last = scheduling.schedule(pod("w3", "train"));

    assertThat(last).isInstanceOf(Outcome.Bound.class);
    assertThat(java.util.List.of(nodeOf("w0"), nodeOf("w1"), nodeOf("w2"), nodeOf("w3")))
        .containsExactlyInAnyOrder("node-a", "node-b", "node-c", "node-d");
    for (int i = 0; i < 4; i++) {
      assertThat(allocated("w" + i)).isTrue();
    }
  }

  @Test
  void aGangThatCannotFitWholeHoldsNothingAndALonePodTakesAFreeGpu() {
    setUpClasses();
    gpuNode("node-a", "r1");
    gpuNode("node-b", "r1");
    gpuNode("node-c", "r1");
    groups.put("big", new PodGroupPolicy("big", 4, null));
    PodScheduling scheduling = scheduling();
    for (int i = 0; i < 3; i++) {
      pod("b" + i, "big");
    }

    Outcome o = scheduling.schedule(pod("b3", "big"));

    assertThat(o).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(((Outcome.Unschedulable) o).message())
        .startsWith("pod group big: 3 of the 4 pods minCount needs fit");
    for (int i = 0; i < 4; i++) {
      assertThat(nodeOf("b" + i)).as("b" + i + " bound").isNull();
      assertThat(allocated("b" + i)).as("b" + i + "'s claim allocated").isFalse();
    }
    // nothing held in memory either: a lone pod gets one of the three GPUs
    assertThat(scheduling.schedule(pod("solo", null))).isInstanceOf(Outcome.Bound.class);
  }

  @Test
  void aWhatIfTellsWhereTheGangWouldGoAndHoldsNothing() {
    setUpClasses();
    gpuNode("node-a", "r1");
    gpuNode("node-b", "r1");
    groups.put("pair", new PodGroupPolicy("pair", 2, null));
    PodScheduling scheduling = scheduling();
    Pod first = pod("p0", "pair");
    pod("p1", "pair");

    GangWhatIf w = scheduling.whatIfGang(first).orElseThrow();

    assertThat(w.kept()).isTrue();
    assertThat(w.placed().keySet()).containsExactly("p0", "p1");
    assertThat(w.placed().values()).containsExactlyInAnyOrder("node-a", "node-b");
    assertThat(nodeOf("p0")).isNull();
    assertThat(allocated("p0")).isFalse();
    assertThat(allocated("p1")).isFalse();
    // nothing held in memory: the gang is then placed for real
    assertThat(scheduling.schedule(get("p0"))).isInstanceOf(Outcome.Bound.class);
    assertThat(nodeOf("p1")).isNotNull();
  }

  @Test
  void aWhatIfSaysWhyAGangWouldWaitOrNotFit() {
    setUpClasses();
    gpuNode("node-a", "r1");
    groups.put("pair", new PodGroupPolicy("pair", 2, null));
    PodScheduling scheduling = scheduling();
    Pod first = pod("p0", "pair");

    assertThat(scheduling.whatIfGang(first).orElseThrow().refused())
        .isEqualTo(
            new Outcome.Unschedulable(
                GangScheduling.WAITING_FOR_MEMBERS, Map.of(), "GangIncomplete"));

    pod("p1", "pair");
    GangWhatIf w = scheduling.whatIfGang(first).orElseThrow();
    assertThat(w.kept()).isFalse();
    assertThat(((Outcome.Unschedulable) w.refused()).message())
        .startsWith("pod group pair: 1 of the 2 pods minCount needs fit");
    assertThat(scheduling.whatIfGang(pod("solo", null))).isEmpty();
  }

  /**
   * Another member's attempt while a pass holds its assumptions must not count them as placed
   * members: it would then place fewer than minCount and call the gang whole. Its count waits for
   * the lock.
   */
  @Test
  void aMemberAttemptedDuringAnotherMembersPassDoesNotCountItsAssumptionsAsPlaced()
      throws Exception {
    setUpClasses();
    gpuNode("node-a", "r1");
    gpuNode("node-b", "r1");
    gpuNode("node-c", "r1");
    groups.put("big", new PodGroupPolicy("big", 4, null));
    PodScheduling scheduling = scheduling();
    for (int i = 0; i < 3; i++) {
      pod("b" + i, "big");
    }
    Pod last = pod("b3", "big");
    java.util.concurrent.atomic.AtomicReference<Thread> other =
        new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.atomic.AtomicReference<Outcome> othersOutcome =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread passThread = Thread.currentThread();
    beforeSearch =
        p -> {
          // in the pass of b3, at its last member (three are assumed): b0 is attempted meanwhile
          if (Thread.currentThread() == passThread
              && p.getMetadata().getName().equals("b3")
              && other.get() == null) {
            Thread t = new Thread(() -> othersOutcome.set(scheduling.schedule(get("b0"))));
            other.set(t);
            t.start();
            // it runs until it needs the lock, which this pass holds
            while (t.getState() != Thread.State.BLOCKED && t.isAlive()) {
              java.util.concurrent.locks.LockSupport.parkNanos(100_000); // leave it the CPU
            }
          }
        };

    scheduling.schedule(last);
    other.get().join();

    assertThat(othersOutcome.get()).isInstanceOf(Outcome.Unschedulable.class);
    for (int i = 0; i < 4; i++) {
      assertThat(nodeOf("b" + i)).as("b" + i + " bound").isNull();
      assertThat(allocated("b" + i)).as("b" + i + "'s claim allocated").isFalse();
    }
  }

  @Test
  void minCountOfThreeMembersLandsTheTwoThatFitAndLeavesTheThirdPending() {
    setUpClasses();
    gpuNode("node-a", "r1");
    gpuNode("node-b", "r1");
    groups.put("pair", new PodGroupPolicy("pair", 2, null));
    PodScheduling scheduling = scheduling();
    pod("p0", "pair");
    pod("p1", "pair");

    Outcome o = scheduling.schedule(pod("p2", "pair"));

    assertThat(nodeOf("p0")).isNotNull();
    assertThat(nodeOf("p1")).isNotNull();
    assertThat(nodeOf("p2")).isNull();
    assertThat(o).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(allocated("p2")).isFalse();
  }

  @Test
  void aGangTooBigForAnyOneRackWaitsThoughTheClusterHasRoom() {
    setUpClasses();
    gpuNode("node-a", "r1");
    gpuNode("node-b", "r2");
    groups.put("ring", new PodGroupPolicy("ring", 2, "rack"));
    PodScheduling scheduling = scheduling();
    pod("r0", "ring");

    Outcome o = scheduling.schedule(pod("r1", "ring"));

    assertThat(((Outcome.Unschedulable) o).message())
        .startsWith("pod group ring: 1 of the 2 pods minCount needs fit in any one rack domain");
    assertThat(nodeOf("r0")).isNull();
    assertThat(nodeOf("r1")).isNull();
  }

  /**
   * Columns: the group's minCount (0: basic), the racks of the nodes, kube-scheduler's
   * TopologyAwareWorkloadScheduling, where the two pods of the group (key {@code rack}) land. With
   * the gate off the key is ignored, as kube-scheduler 1.37.2 ignores it; by name the first two
   * nodes are in different racks.
   */
  static Stream<Arguments> topologyGate() {
    Map<String, String> splitFirst = Map.of("node-a", "r1", "node-b", "r2", "node-c", "r2");
    Map<String, String> oneEach = Map.of("node-a", "r1", "node-b", "r2");
    return Stream.of(
        Arguments.of(named("gate on: a gang in one rack", 2), splitFirst, true, nodes("b", "c")),
        Arguments.of(named("gate off: a gang anywhere", 2), splitFirst, false, nodes("a", "b")),
        Arguments.of(
            named("gate on: a gang too big for any rack waits", 2),
            oneEach,
            true,
            nodes(null, null)),
        Arguments.of(
            named("gate off: a gang too big for any rack lands", 2),
            oneEach,
            false,
            nodes("a", "b")),
        Arguments.of(
            named("gate on: a basic group follows its first pod", 0),
            oneEach,
            true,
            nodes("a", null)),
        Arguments.of(
            named("gate off: a basic group's pods go alone", 0), oneEach, false, nodes("a", "b")));
  }

  /** Node {@code node-<x>} for each x; null for a pod left pending. */
  static List<String> nodes(String... suffixes) {
    return Arrays.stream(suffixes).map(x -> x == null ? null : "node-" + x).toList();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("topologyGate")
  void aTopologyKeyCountsOnlyWithTheGateOn(
      int minCount, Map<String, String> racks, boolean gate, List<String> expected) {
    setUpClasses();
    new TreeMap<>(racks).forEach(this::gpuNode);
    groups.put("ring", new PodGroupPolicy("ring", minCount, "rack"));
    PodScheduling scheduling =
        scheduling(
            (namespace, name) -> Optional.ofNullable(groups.get(name)),
            new SchedulerFeatures(gate));

    scheduling.schedule(pod("r0", "ring"));
    scheduling.schedule(pod("r1", "ring"));

    assertThat(Arrays.asList(nodeOf("r0"), nodeOf("r1")))
        .containsExactlyInAnyOrderElementsOf(expected);
  }

  @Test
  void aPodOfNoGroupAndAMemberOfABasicGroupAreScheduledAlone() {
    setUpClasses();
    gpuNode("node-a", "r1");
    groups.put("loose", new PodGroupPolicy("loose", 0, null));
    PodScheduling scheduling = scheduling();

    assertThat(scheduling.schedule(pod("m0", "loose"))).isEqualTo(new Outcome.Bound("node-a"));
  }

  @Test
  void aMemberWhosePodGroupDoesNotExistWaitsForIt() {
    setUpClasses();
    gpuNode("node-a", "r1");
    PodScheduling scheduling = scheduling();

    Outcome o = scheduling.schedule(pod("m0", "later"));

    assertThat(((Outcome.Unschedulable) o).reason()).isEqualTo("PodGroupMissing");
    assertThat(nodeOf("m0")).isNull();
  }

  /**
   * Pods created before their PodGroup (upstream's gangscheduling PreEnqueue keeps them out of the
   * queue until the group exists, and kube-controller-manager makes no claim for them meanwhile):
   * no claim of their own is made from the template the group's claim will come from, and once the
   * group exists the gang lands on the group's one claim.
   */
  @Test
  void membersCreatedBeforeTheirPodGroupMakeNoClaimAndLandOnceItExists() {
    setUpClasses();
    gpuNode("node-a", "r1");
    gpuNode("node-b", "r1");
    client.resource(K.template("one-gpu")).create();
    ApiPodGroups api = new ApiPodGroups(client);
    PodScheduling scheduling =
        scheduling(
            new PodGroups() {
              @Override
              public Optional<PodGroupPolicy> get(String namespace, String name) {
                return api.get(namespace, name);
              }

              @Override
              public void recordClaims(
                  String namespace, String name, Map<String, String> statuses) {}
            });
    templateMember("w0", "train");
    templateMember("w1", "train");

    Outcome before = scheduling.schedule(get("w0"));

    assertThat(before)
        .isEqualTo(
            new Outcome.Unschedulable(
                "waiting for pods's pod group \"train\" to appear in scheduling queue",
                Map.of(),
                "PodGroupMissing"));
    assertThat(client.resources(ResourceClaim.class).inNamespace(NS).list().getItems()).isEmpty();
    assertThat(
            get("w0").getStatus() == null ? null : get("w0").getStatus().getResourceClaimStatuses())
        .isNullOrEmpty();

    podGroup(
        "train",
        2,
        Map.of(
            "resourceClaims",
            List.of(Map.of("name", "gpu", "resourceClaimTemplateName", "one-gpu"))));

    assertThat(scheduling.schedule(get("w1"))).isInstanceOf(Outcome.Bound.class);
    assertThat(client.resources(ResourceClaim.class).inNamespace(NS).list().getItems())
        .singleElement()
        .satisfies(c -> assertThat(c.getMetadata().getName()).startsWith("train-gpu-"));
    assertThat(nodeOf("w0")).isNotNull().isEqualTo(nodeOf("w1"));
  }

  /** A PodGroup in the mock API server, read and written as the service does. */
  GenericKubernetesResource podGroup(String name, int minCount, Map<String, Object> extraSpec) {
    Map<String, Object> spec = new HashMap<>(extraSpec);
    spec.put("schedulingPolicy", Map.of("gang", Map.of("minCount", minCount)));
    return client
        .genericKubernetesResources(ApiPodGroups.CONTEXT)
        .inNamespace(NS)
        .resource(
            new GenericKubernetesResourceBuilder()
                .withApiVersion(PodGroupPolicy.API_VERSION)
                .withKind("PodGroup")
                .withNewMetadata()
                .withNamespace(NS)
                .withName(name)
                .withUid("uid-pg-" + name)
                .endMetadata()
                .addToAdditionalProperties("spec", spec)
                .build())
        .create();
  }

  /** A member whose entry {@code gpu} names the template {@code one-gpu}, as its group's does. */
  Pod templateMember(String name, String group) {
    Pod p = K.podWithTemplate(name, "gpu", "one-gpu");
    p.getSpec().setAdditionalProperty("schedulingGroup", Map.of("podGroupName", group));
    return client.resource(p).create();
  }

  /**
   * A PodGroup's own claim (DRAWorkloadResourceClaims): made once from its template for the group
   * (named for it, owned by it, recorded in its status), allocated once, reserved for the group
   * rather than any member, and every member bound where its device is, though another node has a
   * free GPU. No member gets a claim of its own.
   */
  @Test
  void aPodGroupsClaimIsMadeOnceAllocatedOnceAndSharedByAllMembers() {
    setUpClasses();
    gpuNode("node-a", "r1");
    gpuNode("node-b", "r1");
    client.resource(K.template("one-gpu")).create();
    String uid =
        podGroup(
                "train",
                2,
                Map.of(
                    "resourceClaims",
                    List.of(Map.of("name", "gpu", "resourceClaimTemplateName", "one-gpu"))))
            .getMetadata()
            .getUid();
    // read as the service reads them; the status apply recorded (the mock server has no
    // server-side apply: GangSchedulingIT sees the API server's)
    ApiPodGroups api = new ApiPodGroups(client);
    List<Map<String, String>> applied = new java.util.ArrayList<>();
    PodScheduling scheduling =
        scheduling(
            new PodGroups() {
              @Override
              public Optional<PodGroupPolicy> get(String namespace, String name) {
                return api.get(namespace, name);
              }

              @Override
              public void recordClaims(
                  String namespace, String name, Map<String, String> statuses) {
                applied.add(statuses);
              }
            });
    templateMember("w0", "train");
    templateMember("w1", "train");

    Outcome o = scheduling.schedule(get("w1"));

    assertThat(o).isInstanceOf(Outcome.Bound.class);
    List<ResourceClaim> claims =
        client.resources(ResourceClaim.class).inNamespace(NS).list().getItems();
    assertThat(claims).hasSize(1);
    ResourceClaim shared = claims.get(0);
    assertThat(shared.getMetadata().getName()).startsWith("train-gpu-");
    assertThat(shared.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getKind()).isEqualTo("PodGroup");
              assertThat(r.getUid()).isEqualTo(uid);
            });
    assertThat(shared.getStatus().getAllocation()).isNotNull();
    assertThat(shared.getStatus().getReservedFor())
        .containsExactly(
            new ResourceClaimConsumerReferenceBuilder()
                .withApiGroup("scheduling.k8s.io")
                .withResource("podgroups")
                .withName("train")
                .withUid(uid)
                .build());
    String node = shared.getStatus().getAllocation().getDevices().getResults().get(0).getPool();
    assertThat(nodeOf("w0")).isEqualTo(node);
    assertThat(nodeOf("w1")).isEqualTo(node);
    assertThat(applied).containsExactly(Map.of("gpu", shared.getMetadata().getName()));
  }

  /**
   * A member bound by another member's pass has not recorded the group's claim yet: when its own
   * event comes, it records the group's claim and gets none of its own.
   */
  @Test
  void aMemberBoundByAnotherMembersPassRecordsTheGroupsClaimAndMakesNoneOfItsOwn() {
    setUpClasses();
    gpuNode("node-a", "r1");
    client.resource(K.template("one-gpu")).create();
    podGroup(
        "train",
        1,
        Map.of(
            "resourceClaims",
            List.of(Map.of("name", "gpu", "resourceClaimTemplateName", "one-gpu"))));
    ApiPodGroups api = new ApiPodGroups(client);
    PodScheduling scheduling =
        scheduling(
            new PodGroups() {
              @Override
              public Optional<PodGroupPolicy> get(String namespace, String name) {
                return api.get(namespace, name);
              }

              @Override
              public void recordClaims(
                  String namespace, String name, Map<String, String> statuses) {}
            });
    assertThat(scheduling.schedule(templateMember("w0", "train")))
        .isInstanceOf(Outcome.Bound.class);
    String shared =
        client
            .resources(ResourceClaim.class)
            .inNamespace(NS)
            .list()
            .getItems()
            .get(0)
            .getMetadata()
            .getName();
    Pod bound =
        client
            .resource(
                new PodBuilder(K.podWithTemplate("w1", "gpu", "one-gpu"))
                    .editSpec()
                    .withNodeName("node-a")
                    .addToAdditionalProperties("schedulingGroup", Map.of("podGroupName", "train"))
                    .endSpec()
                    .build())
            .create();

    scheduling.reserveForBoundPod(bound);

    assertThat(client.resources(ResourceClaim.class).inNamespace(NS).list().getItems()).hasSize(1);
    assertThat(get("w1").getStatus().getResourceClaimStatuses())
        .singleElement()
        .satisfies(st -> assertThat(st.getResourceClaimName()).isEqualTo(shared));
  }
}
