package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kdra.claimcontroller.domain.GroupPreemption;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ApiPodGroups;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodGroups;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.claimcontroller.k8s.PreemptionWriter;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.testing.AllocFixtures;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Preemption for pods with claims, end to end against the mock API server with the dra-core
 * allocator: one GPU per node, held by pods of low priority; the victims' claims are freed in the
 * simulation, their deletion and the preemptor's nomination are written, and what the preemptor was
 * promised is kept from pods of no higher priority until it is placed.
 */
@EnableKubernetesMockClient(crud = true)
class PreemptionTest {

  KubernetesClient client;
  ApiView view;
  PodScheduling scheduling;
  Preemption preemption;
  final List<PodDisruptionBudget> budgets = new ArrayList<>();
  DraCorePodAllocator allocator;

  final PodBinder binder =
      (pod, node) ->
          client
              .pods()
              .inNamespace(NS)
              .withName(pod.getMetadata().getName())
              .edit(p -> new PodBuilder(p).editSpec().withNodeName(node).endSpec().build());

  @BeforeEach
  void setUp() {
    view = new ApiView(client);
    client.resource(AllocFixtures.deviceClass("gpu")).create();
    start();
  }

  /** The scheduler and its preemption, as a (re)started process has them: nothing in memory. */
  void start() {
    allocator =
        new DraCorePodAllocator(
            AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "share"));
    EventRecorder events = new EventRecorder(client, K.SCHEDULER, Clock.systemUTC());
    scheduling =
        new PodScheduling(
            view,
            new RecentWrites(),
            new PodScheduling.Writers(
                new ClaimWriter(client, K.SCHEDULER, 3),
                new PodWriter(client, 3, Clock.systemUTC()),
                binder,
                events),
            allocator,
            PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP));
    preemption =
        new Preemption(
            view,
            scheduling.nominations(),
            new PreemptionWriter(client, Clock.systemUTC(), 3),
            events,
            claims -> allocator.allocator(claims, view),
            () -> budgets,
            TemplateMode.OWN,
            K.SCHEDULER,
            () -> true);
  }

  /** A Ready node {@code name} with one GPU, {@code gpu-0} in pool {@code name}. */
  void nodeWithOneGpu(String name) {
    client.nodes().resource(K.readyNode(name)).create();
    client
        .resource(
            AllocFixtures.slice(name + "-gpu", name, AllocFixtures.device("gpu-0").build()).build())
        .create();
  }

  /** Pod {@code name} of {@code priority} using claim {@code c-<name>}, bound to {@code node}. */
  Pod running(String name, int priority, String node, String... labels) {
    Pod pod = pod(name, priority, node);
    for (int i = 0; i < labels.length; i += 2) {
      pod.getMetadata().getLabels().put(labels[i], labels[i + 1]);
    }
    pod = client.resource(pod).create();
    client.resource(allocatedOn(node, claim(name), pod)).create();
    return pod;
  }

  Pod pod(String name, int priority, String node) {
    return K.pod(name)
        .editMetadata()
        .addToLabels("app", name)
        .endMetadata()
        .editSpec()
        .withPriority(priority)
        .withNodeName(node)
        .addNewResourceClaim()
        .withName("gpu")
        .withResourceClaimName("c-" + name)
        .endResourceClaim()
        .endSpec()
        .build();
  }

  Pod pending(String name, int priority) {
    Pod pod = client.resource(pod(name, priority, null)).create();
    client.resource(claim(name).build()).create();
    return pod;
  }

  static ResourceClaimBuilder claim(String name) {
    return K.claim("c-" + name).editMetadata().withResourceVersion(null).endMetadata();
  }

  static ResourceClaim allocatedOn(String node, ResourceClaimBuilder b, Pod... reservedFor) {
    return K.allocatedOn(AllocFixtures.DRIVER, node, b, reservedFor).build();
  }

  /** Pod {@code name} gets a finalizer: once deleted, it terminates until {@link #released}. */
  void heldOnDeletion(String name) {
    client
        .pods()
        .inNamespace(NS)
        .withName(name)
        .edit(
            p ->
                new PodBuilder(p)
                    .editMetadata()
                    .addToFinalizers("test/hold")
                    .endMetadata()
                    .build());
  }

  /** Pod {@code name}'s finalizer removed: deleted, it goes. */
  void released(String name) {
    client
        .pods()
        .inNamespace(NS)
        .withName(name)
        .edit(
            p -> new PodBuilder(p).editMetadata().withFinalizers(List.of()).endMetadata().build());
  }

  Pod get(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }

  Outcome attempt(Pod pod) {
    Outcome o = scheduling.schedule(get(pod.getMetadata().getName()));
    if (o instanceof Outcome.Unschedulable u) {
      return preemption.afterUnschedulable(get(pod.getMetadata().getName()), u);
    }
    if (o instanceof Outcome.Bound) {
      preemption.placed(pod.getMetadata().getUid());
    }
    return o;
  }

  /** What deleting the victim brings about: it is gone and its claim deallocated. */
  void victimGone(String name) {
    client.pods().inNamespace(NS).withName(name).delete();
    client.resources(ResourceClaim.class).inNamespace(NS).withName("c-" + name).delete();
  }

  List<String> events(String reason) {
    return client.v1().events().inNamespace(NS).list().getItems().stream()
        .filter(e -> reason.equals(e.getReason()))
        .map(e -> e.getInvolvedObject().getName() + ": " + e.getMessage())
        .toList();
  }

  @Test
  void aHighPriorityPodPreemptsTheLowPriorityHolderOfTheOnlyGpuAndIsPlacedOnceItIsGone() {
    nodeWithOneGpu("node-a");
    Pod low = running("low", 10, "node-a");
    Pod high = pending("high", 100);

    Outcome first = attempt(high);

    assertThat(first).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(((Outcome.Unschedulable) first).message())
        .endsWith("preemption: nominated node node-a, preempting ns/low.");
    assertThat(get("high").getStatus().getNominatedNodeName()).isEqualTo("node-a");
    assertThat(get("low")).as("deleted (the mock API server has no grace period)").isNull();
    assertThat(events("Preempted"))
        .containsExactly(
            "low: Preempted by pod " + high.getMetadata().getUid() + " on node node-a");
    assertThat(events("Preempting"))
        .containsExactly("high: Preempting ns/low on node node-a to make room");

    victimGone("low");
    // a pod of lower priority than the preemptor's may not take the freed GPU meanwhile
    Pod mid = pending("mid", 50);
    assertThat(scheduling.schedule(get("mid"))).isInstanceOf(Outcome.Unschedulable.class);

    assertThat(attempt(high)).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(low.getMetadata().getUid()).isNotNull();
  }

  /**
   * The only free-able GPU is held by a low-priority gang's PodGroup claim (reserved for the group,
   * not its pods): the whole gang is evicted, its member on another node too, and once the members
   * are gone the group's claim is freed for the preemptor, which is then placed.
   */
  @Test
  void aGangHoldingTheGpuThroughItsGroupClaimIsEvictedWholeAndItsClaimFreed() {
    nodeWithOneGpu("node-a");
    nodeWithOneGpu("node-b");
    running("keep", 100, "node-b");
    gangHoldingTheGpuOfNodeA(new PodGroupPolicy("train", 2, null));
    Pod high = pending("high", 100);

    Outcome first = attempt(high);

    assertThat(((Outcome.Unschedulable) first).message())
        .endsWith("preemption: nominated node node-a, preempting ns/w0, ns/w1.");
    assertThat(get("w0")).isNull();
    assertThat(get("w1")).isNull();

    // the members are gone; the group (and its claim) stays: freed for the preemptor
    assertThat(attempt(high)).isInstanceOf(Outcome.Unschedulable.class);
    ResourceClaim freed =
        client.resources(ResourceClaim.class).inNamespace(NS).withName("train-gpu-x").get();
    assertThat(freed.getStatus().getAllocation()).isNull();
    assertThat(freed.getStatus().getReservedFor()).isEmpty();

    assertThat(attempt(high)).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(get("keep")).isNotNull();
  }

  /**
   * PodGroup {@code train} of {@code policy}, its claim {@code train-gpu-x} holding node-a's GPU
   * (reserved for the group), its members {@code w0} on node-a and {@code w1} on node-b, both of
   * priority 1.
   */
  void gangHoldingTheGpuOfNodeA(PodGroupPolicy policy) {
    gangHoldingTheGpuOfNodeA(
        (ns, name) -> Optional.ofNullable("train".equals(name) ? policy : null));
  }

  /** As above, the group read from {@code groups}. */
  void gangHoldingTheGpuOfNodeA(PodGroups groups) {
    String groupUid = "uid-pg-train";
    preemption.placeGangsWith(groups, scheduling::releaseGroupClaim);
    ResourceClaim groupClaim =
        allocatedOn(
            "node-a",
            K.claim("train-gpu-x").editMetadata().withResourceVersion(null).endMetadata());
    groupClaim
        .getStatus()
        .setReservedFor(
            List.of(
                new ResourceClaimConsumerReferenceBuilder()
                    .withApiGroup("scheduling.k8s.io")
                    .withResource("podgroups")
                    .withName("train")
                    .withUid(groupUid)
                    .build()));
    client.resource(groupClaim).create();
    for (String[] m : new String[][] {{"w0", "node-a"}, {"w1", "node-b"}}) {
      Pod member =
          new PodBuilder(K.pod(m[0]).build())
              .editSpec()
              .withPriority(1)
              .withNodeName(m[1])
              .addNewResourceClaim()
              .withName("gpu")
              .withResourceClaimTemplateName("one-gpu")
              .endResourceClaim()
              .addToAdditionalProperties("schedulingGroup", Map.of("podGroupName", "train"))
              .endSpec()
              .build();
      client.resource(member).create();
    }
  }

  /** PodGroup {@code train} in the API server: a gang of 2, disrupted whole. */
  void podGroupTrain() {
    client
        .genericKubernetesResources(ApiPodGroups.CONTEXT)
        .inNamespace(NS)
        .resource(
            new GenericKubernetesResourceBuilder()
                .withApiVersion(PodGroupPolicy.API_VERSION)
                .withKind("PodGroup")
                .withNewMetadata()
                .withNamespace(NS)
                .withName("train")
                .withUid("uid-pg-train")
                .endMetadata()
                .addToAdditionalProperties(
                    "spec",
                    Map.of(
                        "schedulingPolicy",
                        Map.of("gang", Map.of("minCount", 2)),
                        "disruptionMode",
                        Map.of("all", Map.of())))
                .build())
        .create();
  }

  /** The PodGroup's {@code DisruptionTarget} condition, as the API server has it. */
  @SuppressWarnings("unchecked")
  Map<String, Object> disruptionTarget(String group) {
    Map<String, Object> status =
        (Map<String, Object>)
            client
                .genericKubernetesResources(ApiPodGroups.CONTEXT)
                .inNamespace(NS)
                .withName(group)
                .get()
                .getAdditionalProperties()
                .get("status");
    return GroupPreemption.conditions(status).stream()
        .filter(c -> "DisruptionTarget".equals(c.get("type")))
        .findFirst()
        .orElse(Map.of());
  }

  /** Member {@code name} of PodGroup {@code train}, bound to {@code node} (null: pending). */
  Pod trainMember(String name, String node) {
    return client
        .resource(
            new PodBuilder(K.pod(name).build())
                .editSpec()
                .withPriority(1)
                .withNodeName(node)
                .addToAdditionalProperties("schedulingGroup", Map.of("podGroupName", "train"))
                .endSpec()
                .build())
        .create();
  }

  /**
   * The record of the preemption on the PodGroup says the group is about to be disrupted: once the
   * gang is placed again (every member bound, none leaving) and its preemptor no longer waits for
   * it, it is set back to False, so that a later emptying of the group is not taken for this
   * preemption's.
   */
  @Test
  void theGroupsRecordOfAPreemptionIsClearedOnceItsPodsAreAllPlacedAgain() {
    nodeWithOneGpu("node-a");
    nodeWithOneGpu("node-b");
    running("keep", 100, "node-b");
    podGroupTrain();
    gangHoldingTheGpuOfNodeA(new ApiPodGroups(client));
    Pod high = pending("high", 100);
    attempt(high);
    assertThat(disruptionTarget("train")).containsEntry("status", "True");

    trainMember("w2", "node-b");
    trainMember("w3", null);
    preemption.memberBound(get("w2"));
    assertThat(disruptionTarget("train")).as("w3 not placed yet").containsEntry("status", "True");

    client
        .pods()
        .inNamespace(NS)
        .withName("w3")
        .edit(p -> new PodBuilder(p).editSpec().withNodeName("node-b").endSpec().build());
    preemption.memberBound(get("w3"));
    assertThat(disruptionTarget("train"))
        .as("the preemptor still waits, nominated: the record frees the claim for it")
        .containsEntry("status", "True");

    client.pods().inNamespace(NS).withName("high").delete();
    preemption.memberBound(get("w3"));

    assertThat(disruptionTarget("train"))
        .containsEntry("status", "False")
        .containsEntry("reason", "Rescheduled");
    assertThat(GroupPreemption.preemptor(Map.of("conditions", List.of(disruptionTarget("train")))))
        .isEmpty();
  }

  /**
   * A restart (or a leader change) between the eviction of a gang and the release of its group's
   * claim: the decision is read back from the PodGroup (its DisruptionTarget condition names the
   * preemptor), so the claim is still freed for the preemptor rather than kept until the gang is
   * placed again.
   */
  @Test
  void aRestartedSchedulerStillFreesTheClaimOfAGangItsPreemptorEmptied() {
    nodeWithOneGpu("node-a");
    nodeWithOneGpu("node-b");
    running("keep", 100, "node-b");
    podGroupTrain();
    gangHoldingTheGpuOfNodeA(new ApiPodGroups(client));
    Pod high = pending("high", 100);
    assertThat(((Outcome.Unschedulable) attempt(high)).message())
        .endsWith("preemption: nominated node node-a, preempting ns/w0, ns/w1.");

    start();
    preemption.placeGangsWith(new ApiPodGroups(client), scheduling::releaseGroupClaim);

    assertThat(attempt(high)).isInstanceOf(Outcome.Unschedulable.class);
    ResourceClaim freed =
        client.resources(ResourceClaim.class).inNamespace(NS).withName("train-gpu-x").get();
    assertThat(freed.getStatus().getAllocation()).isNull();
    assertThat(attempt(high)).isEqualTo(new Outcome.Bound("node-a"));
  }

  /**
   * A restart (or a leader change) after the preemptor was nominated: the promise is read back from
   * its {@code nominatedNodeName} (upstream's nominator does the same), and the GPU its victim
   * frees is still kept from a pod of lower priority.
   */
  @Test
  void aRestartedSchedulerKeepsTheFreedGpuFromALowerPriorityPod() {
    nodeWithOneGpu("node-a");
    running("low", 10, "node-a");
    Pod high = pending("high", 100);
    attempt(high);
    assertThat(get("high").getStatus().getNominatedNodeName()).isEqualTo("node-a");

    start();
    victimGone("low");
    pending("mid", 50);

    assertThat(scheduling.schedule(get("mid"))).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(attempt(high)).isEqualTo(new Outcome.Bound("node-a"));
  }

  /**
   * Restarted while the victim still terminates: the devices the preemptor would take are simulated
   * with the victims leaving its nominated node gone, so they are kept once they are.
   */
  @Test
  void aSchedulerRestartedWhileTheVictimTerminatesKeepsItsGpuOnceItIsGone() {
    nodeWithOneGpu("node-a");
    running("low", 10, "node-a");
    heldOnDeletion("low");
    Pod high = pending("high", 100);
    attempt(high);
    assertThat(get("low").getMetadata().getDeletionTimestamp()).isNotNull();

    start();
    pending("mid", 50);
    assertThat(scheduling.schedule(get("mid"))).isInstanceOf(Outcome.Unschedulable.class);
    released("low");
    victimGone("low");

    assertThat(scheduling.schedule(get("mid"))).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(attempt(high)).isEqualTo(new Outcome.Bound("node-a"));
  }

  /** The CPU a restarted scheduler finds promised to a nominated pod is kept too. */
  @Test
  void aRestartedSchedulerKeepsTheCpuOfANominatedPodFromALowerPriorityPod() {
    client.nodes().resource(K.readyNode("node-a")).create();
    client.resource(withCpu(pendingNominated("high", 100, "node-a", K.SCHEDULER), "3")).create();
    Pod mid =
        client
            .resource(withCpu(K.pod("mid").editSpec().withPriority(50).endSpec().build(), "2"))
            .create();
    Pod top =
        client
            .resource(withCpu(K.pod("top").editSpec().withPriority(200).endSpec().build(), "2"))
            .create();

    assertThat(scheduling.schedule(mid)).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(scheduling.schedule(top))
        .as("of higher priority")
        .isEqualTo(new Outcome.Bound("node-a"));
  }

  /** A nomination by another scheduler, or one cleared since, holds nothing here. */
  @Test
  void aNominationOfAnotherSchedulerHoldsNothing() {
    client.nodes().resource(K.readyNode("node-a")).create();
    client
        .resource(withCpu(pendingNominated("other", 100, "node-a", "default-scheduler"), "3"))
        .create();
    Pod mid =
        client
            .resource(withCpu(K.pod("mid").editSpec().withPriority(50).endSpec().build(), "2"))
            .create();

    assertThat(scheduling.schedule(mid)).isEqualTo(new Outcome.Bound("node-a"));
  }

  static Pod pendingNominated(String name, int priority, String node, String scheduler) {
    return K.pod(name)
        .editSpec()
        .withPriority(priority)
        .withSchedulerName(scheduler)
        .endSpec()
        .withNewStatus()
        .withNominatedNodeName(node)
        .endStatus()
        .build();
  }

  static Pod withCpu(Pod pod, String cpu) {
    pod.getSpec()
        .getContainers()
        .get(0)
        .setResources(
            new ResourceRequirementsBuilder().addToRequests("cpu", new Quantity(cpu)).build());
    return pod;
  }

  /**
   * Upstream's DefaultPreemption (Workload API on) weighs a PodGroup's member as a victim by its
   * group's priority: a gang of pods of low priority in a group of high priority is no victim.
   */
  @Test
  void aGangWhoseGroupOutranksThePreemptorIsNoVictimThoughItsPodsAreLower() {
    nodeWithOneGpu("node-a");
    nodeWithOneGpu("node-b");
    running("keep", 100, "node-b");
    gangHoldingTheGpuOfNodeA(
        new PodGroupPolicy("train", 2, null, PodGroupClaims.none("train", null), true, 1000));
    Pod high = pending("high", 100);

    Outcome o = attempt(high);

    assertThat(((Outcome.Unschedulable) o).message())
        .endsWith(
            "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming"
                + " pod.");
    assertThat(get("w0")).isNotNull();
    assertThat(get("w1")).isNotNull();
    assertThat(get("high").getStatus()).as("not nominated").isNull();
  }

  @Test
  void aLeaseLostDuringTheSearchEvictsNobody() {
    nodeWithOneGpu("node-a");
    running("low", 10, "node-a");
    pending("high", 100);
    AtomicInteger asked = new AtomicInteger();
    Preemption fenced =
        new Preemption(
            view,
            scheduling.nominations(),
            new PreemptionWriter(client, Clock.systemUTC(), 3),
            new EventRecorder(client, K.SCHEDULER, Clock.systemUTC()),
            claims -> allocator.allocator(claims, view),
            () -> budgets,
            TemplateMode.OWN,
            K.SCHEDULER,
            () -> asked.getAndIncrement() == 0);

    Outcome o = scheduling.schedule(get("high"));
    fenced.afterUnschedulable(get("high"), (Outcome.Unschedulable) o);

    assertThat(get("low")).as("not preempted once the Lease is lost").isNotNull();
    assertThat(
            get("high").getStatus() == null ? null : get("high").getStatus().getNominatedNodeName())
        .isNull();
  }

  @Test
  void aGangMemberPreemptsNobody() {
    nodeWithOneGpu("node-a");
    running("low", 10, "node-a");
    Pod member = pod("member", 100, null);
    member.getSpec().setAdditionalProperty("schedulingGroup", Map.of("podGroupName", "job"));
    client.resource(member).create();
    client.resource(claim("member").build()).create();

    Outcome first = attempt(member);

    assertThat(first).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(((Outcome.Unschedulable) first).message()).endsWith(Preemption.GANG);
    assertThat(get("low")).as("not preempted").isNotNull();
    assertThat(
            get("member").getStatus() == null
                ? null
                : get("member").getStatus().getNominatedNodeName())
        .isNull();
  }

  @Test
  void theVictimIsMarkedAsUpstreamMarksIt() {
    nodeWithOneGpu("node-a");
    running("low", 10, "node-a");
    Pod[] marked = new Pod[1];
    heldOnDeletion("low");
    attempt(pending("high", 100));
    marked[0] = get("low");
    assertThat(marked[0].getStatus().getConditions())
        .anySatisfy(
            c -> {
              assertThat(c.getType()).isEqualTo("DisruptionTarget");
              assertThat(c.getReason()).isEqualTo("PreemptionByScheduler");
              assertThat(c.getMessage())
                  .isEqualTo(K.SCHEDULER + ": preempting to accommodate a higher priority pod");
            });
    assertThat(marked[0].getMetadata().getDeletionTimestamp()).isNotNull();

    // while it terminates, the preemptor waits instead of preempting more
    running("other", 10, "node-a");
    Outcome again = attempt(get("high"));
    assertThat(((Outcome.Unschedulable) again).message())
        .endsWith("preemption: not eligible due to a terminating pod on the nominated node.");
    assertThat(get("other")).isNotNull();
  }

  @Test
  void aPodWithPreemptionPolicyNeverWaits() {
    nodeWithOneGpu("node-a");
    running("low", 10, "node-a");
    Pod high =
        client
            .resource(
                new PodBuilder(pod("high", 100, null))
                    .editSpec()
                    .withPreemptionPolicy("Never")
                    .endSpec()
                    .build())
            .create();
    client.resource(claim("high").build()).create();

    Outcome o = attempt(high);

    assertThat(((Outcome.Unschedulable) o).message())
        .endsWith("preemption: not eligible due to preemptionPolicy=Never.");
    assertThat(get("low")).isNotNull();
  }

  @Test
  void aClaimStillReservedByAPodThatStaysIsNotFreed() {
    nodeWithOneGpu("node-a");
    Pod low = client.resource(pod("low", 10, "node-a")).create();
    Pod keeper =
        client
            .resource(
                new PodBuilder(pod("keeper", 1000, "node-a"))
                    .editSpec()
                    .editResourceClaim(0)
                    .withResourceClaimName("c-low")
                    .endResourceClaim()
                    .endSpec()
                    .build())
            .create();
    client.resource(allocatedOn("node-a", claim("low"), low, keeper)).create();
    Pod high = pending("high", 100);

    Outcome o = attempt(high);

    assertThat(((Outcome.Unschedulable) o).message())
        .endsWith(
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
    assertThat(get("low")).isNotNull();
    assertThat(
            get("high").getStatus() == null ? null : get("high").getStatus().getNominatedNodeName())
        .isNull();
  }

  @Test
  void aPdbProtectedPodIsSparedWhenAnotherVictimExists() {
    nodeWithOneGpu("node-a");
    nodeWithOneGpu("node-b");
    running("guarded", 10, "node-a", "tier", "batch");
    running("free", 20, "node-b");
    budgets.add(
        new PodDisruptionBudgetBuilder()
            .withNewMetadata()
            .withNamespace(NS)
            .withName("batch")
            .endMetadata()
            .withNewSpec()
            .withNewSelector()
            .addToMatchLabels("tier", "batch")
            .endSelector()
            .endSpec()
            .withNewStatus()
            .withDisruptionsAllowed(0)
            .endStatus()
            .build());

    attempt(pending("high", 100));

    assertThat(get("guarded")).isNotNull();
    assertThat(get("free")).isNull();
    assertThat(get("high").getStatus().getNominatedNodeName()).isEqualTo("node-b");
  }

  @Test
  void theVictimsCpuIsFreedToo() {
    client.nodes().resource(K.readyNode("node-a")).create();
    Pod low =
        client
            .resource(
                K.pod("low")
                    .editSpec()
                    .withPriority(10)
                    .withNodeName("node-a")
                    .editContainer(0)
                    .withNewResources()
                    .addToRequests("cpu", new Quantity("3"))
                    .endResources()
                    .endContainer()
                    .endSpec()
                    .build())
            .create();
    Pod high =
        client
            .resource(
                K.pod("high")
                    .editSpec()
                    .withPriority(100)
                    .editContainer(0)
                    .withNewResources()
                    .addToRequests("cpu", new Quantity("2"))
                    .endResources()
                    .endContainer()
                    .endSpec()
                    .build())
            .create();

    Outcome o = attempt(high);

    assertThat(((Outcome.Unschedulable) o).message()).contains("preempting ns/low");
    assertThat(get("low")).isNull();
    assertThat(low).isNotNull();
  }

  @Test
  void noMoreVictimsWhileTheClaimsOfVictimsAlreadyGoneAreBeingReleased() {
    nodeWithOneGpu("node-a");
    nodeWithOneGpu("node-b");
    running("low", 10, "node-a");
    running("mid", 50, "node-b");
    Pod high = pending("high", 100);
    attempt(high);
    assertThat(get("low")).isNull();

    // the victim is gone; its claim, still reserved for it, is not deallocated yet
    Outcome again = attempt(high);

    assertThat(((Outcome.Unschedulable) again).message())
        .endsWith(
            "preemption: not needed, the nominated node fits once the claims of pods gone are released.");
    assertThat(get("mid")).as("not a victim").isNotNull();
    assertThat(get("mid").getMetadata().getDeletionTimestamp()).isNull();
  }
}
