package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kdra.claimcontroller.domain.CleanupPlan;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Kdra;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.domain.Upstream;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.testing.AllocFixtures;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lifecycle rules end to end against the fabric8 mock API server (CRUD mode, with
 * resourceVersion conflicts): claim creation from templates, scheduling, reservation, binding,
 * conflicts, stale decisions, shared claims and cleanup.
 */
@EnableKubernetesMockClient(crud = true)
class PodSchedulingTest {

  KubernetesClient client;
  KubernetesMockServer server;
  ApiView view;
  FakeAllocator allocator;
  ClaimWriter claims;
  PodWriter pods;
  PodScheduling scheduling;

  /** Binds as the API server would: sets spec.nodeName. */
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
    allocator = new FakeAllocator(2);
    claims = new ClaimWriter(client, K.SCHEDULER, 3);
    pods = new PodWriter(client, 3, Clock.systemUTC());
    scheduling = newScheduling(TemplateMode.OWN);
    client.nodes().resource(K.readyNode("node-a")).create();
  }

  PodScheduling newScheduling(TemplateMode mode) {
    return newScheduling(mode, ClaimTracer.NOOP);
  }

  PodScheduling newScheduling(TemplateMode mode, RecentWrites recent) {
    return new PodScheduling(
        view,
        recent,
        claims,
        pods,
        binder,
        new EventRecorder(client, K.SCHEDULER, Clock.systemUTC()),
        allocator,
        mode,
        ClaimTracer.NOOP);
  }

  PodScheduling newScheduling(TemplateMode mode, ClaimTracer tracer) {
    return new PodScheduling(
        view,
        new RecentWrites(),
        claims,
        pods,
        binder,
        new EventRecorder(client, K.SCHEDULER, Clock.systemUTC()),
        allocator,
        mode,
        tracer);
  }

  @Test
  void oneTracePerClaimFromCreationToBindingCarriedByTheClaimAnnotation() {
    io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter spans =
        io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter.create();
    io.opentelemetry.sdk.trace.SdkTracerProvider provider =
        io.opentelemetry.sdk.trace.SdkTracerProvider.builder()
            .addSpanProcessor(io.opentelemetry.sdk.trace.export.SimpleSpanProcessor.create(spans))
            .build();
    PodScheduling traced =
        newScheduling(
            TemplateMode.OWN,
            new io.kdra.claimcontroller.observability.OtelClaimTracer(provider.get("test")));
    // what the computeclass-bridge and the slice-publisher stamp on the objects they write
    String templateWrite = "00-" + "a".repeat(32) + "-" + "b".repeat(16) + "-01";
    String sliceWrite = "00-" + "c".repeat(32) + "-" + "d".repeat(16) + "-01";
    ResourceClaimTemplate template = K.template("tpl");
    template.getMetadata().setAnnotations(Map.of(Kdra.TRACE_ANNOTATION, templateWrite));
    client.resource(template).create();
    client
        .resource(
            new ResourceSliceBuilder()
                .withNewMetadata()
                .withName("node-a-gpu")
                .withAnnotations(Map.of(Kdra.TRACE_ANNOTATION, sliceWrite))
                .endMetadata()
                .withNewSpec()
                .withDriver("gpu.example.com")
                .withNodeName("node-a")
                .withNewPool()
                .withName("node-a")
                .withGeneration(1L)
                .withResourceSliceCount(1L)
                .endPool()
                .addNewDevice()
                .withName("dev-0")
                .endDevice()
                .addNewDevice()
                .withName("dev-1")
                .endDevice()
                .endSpec()
                .build())
        .create();
    create(K.podWithTemplate("web", "gpu", "tpl"));

    traced.schedule(get("web"));
    assertThat(traced.schedule(get("web"))).isEqualTo(new Outcome.Bound("node-a"));

    ResourceClaim claim = allClaims().get(0);
    String traceparent = claim.getMetadata().getAnnotations().get(Kdra.TRACE_ANNOTATION);
    assertThat(traceparent).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01");
    var finished = spans.getFinishedSpanItems();
    assertThat(finished)
        .extracting(io.opentelemetry.sdk.trace.data.SpanData::getName)
        .contains("claim create", "claim allocate", "claim bind");
    assertThat(finished)
        .extracting(io.opentelemetry.sdk.trace.data.SpanData::getTraceId)
        .containsOnly(traceparent.substring(3, 35));
    // later operations, whoever records them, are children of the span the annotation names
    String root = traceparent.substring(36, 52);
    assertThat(finished)
        .filteredOn(d -> !d.getName().equals("claim create"))
        .extracting(io.opentelemetry.sdk.trace.data.SpanData::getParentSpanId)
        .containsOnly(root);
    // the template's and the slice's own traces are linked, not parents: each serves many claims
    assertThat(finished)
        .filteredOn(d -> d.getName().equals("claim create"))
        .singleElement()
        .satisfies(
            d ->
                assertThat(d.getLinks())
                    .extracting(l -> l.getSpanContext().getSpanId())
                    .containsExactly("b".repeat(16)));
    assertThat(finished)
        .filteredOn(d -> d.getName().equals("claim allocate"))
        .singleElement()
        .satisfies(
            d ->
                assertThat(d.getLinks())
                    .extracting(l -> l.getSpanContext().getTraceId())
                    .containsExactly("c".repeat(32)));
    provider.close();
  }

  Pod create(Pod pod) {
    return client.resource(pod).create();
  }

  Pod get(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }

  List<ResourceClaim> allClaims() {
    return client.resources(ResourceClaim.class).inNamespace(NS).list().getItems();
  }

  ResourceClaim claim(String name) {
    return client.resources(ResourceClaim.class).inNamespace(NS).withName(name).get();
  }

  @Test
  void templateClaimIsCreatedRecordedAllocatedReservedAndThePodBound() {
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));

    assertThat(scheduling.schedule(pod)).isInstanceOf(Outcome.Waiting.class);
    ResourceClaim created = allClaims().get(0);
    assertThat(created.getMetadata().getName()).startsWith("web-gpu-");
    assertThat(created.getMetadata().getAnnotations())
        .containsEntry(Upstream.POD_CLAIM_NAME_ANNOTATION, "gpu")
        .containsEntry(Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER);
    assertThat(get("web").getStatus().getResourceClaimStatuses())
        .singleElement()
        .satisfies(
            s -> assertThat(s.getResourceClaimName()).isEqualTo(created.getMetadata().getName()));

    assertThat(scheduling.schedule(get("web"))).isEqualTo(new Outcome.Bound("node-a"));
    ResourceClaim done = claim(created.getMetadata().getName());
    assertThat(done.getMetadata().getFinalizers()).containsExactly(Upstream.FINALIZER);
    assertThat(done.getStatus().getAllocation().getDevices().getResults().get(0).getDevice())
        .isEqualTo("dev-0");
    assertThat(done.getStatus().getReservedFor())
        .singleElement()
        .satisfies(r -> assertThat(r.getUid()).isEqualTo(pod.getMetadata().getUid()));
    assertThat(get("web").getSpec().getNodeName()).isEqualTo("node-a");
    assertThat(allClaims()).hasSize(1);
  }

  @Test
  @Timeout(120) // a failure guard: before the decision and the writes were split, this hung
  void theNextPodIsPlacedWhileTheFirstIsStillBeingBound() throws Exception {
    client.resource(K.template("tpl")).create();
    CountDownLatch firstInBind = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    PodBinder blocking =
        (pod, node) -> {
          if ("p1".equals(pod.getMetadata().getName())) {
            firstInBind.countDown();
            try {
              releaseFirst.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IllegalStateException(e);
            }
          }
          binder.bind(pod, node);
        };
    PodScheduling s =
        new PodScheduling(
            view,
            new RecentWrites(),
            claims,
            pods,
            blocking,
            new EventRecorder(client, K.SCHEDULER, Clock.systemUTC()),
            allocator,
            TemplateMode.OWN,
            ClaimTracer.NOOP);
    for (String name : List.of("p1", "p2")) {
      assertThat(s.schedule(create(K.podWithTemplate(name, "gpu", "tpl"))))
          .isInstanceOf(Outcome.Waiting.class);
    }
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      Future<Outcome> first = executor.submit(() -> s.schedule(get("p1")));
      firstInBind.await();

      // p1 holds its devices (reserved, or assumed) while its binding hangs; p2 goes past it
      assertThat(s.schedule(get("p2"))).isEqualTo(new Outcome.Bound("node-a"));
      releaseFirst.countDown();
      assertThat(first.get()).isEqualTo(new Outcome.Bound("node-a"));
    } finally {
      releaseFirst.countDown();
      executor.shutdownNow();
    }
    assertThat(allClaims())
        .extracting(c -> c.getStatus().getAllocation().getDevices().getResults().get(0).getDevice())
        .containsExactlyInAnyOrder("dev-0", "dev-1");
  }

  @Test
  @Timeout(120) // a failure guard: were the diagnosis under the scheduling lock, this would hang
  void theNextPodIsPlacedWhileWhyTheFirstFitsNowhereIsStillBeingWorkedOut() throws Exception {
    client.resource(K.template("tpl")).create();
    CountDownLatch inDiagnosis = new CountDownLatch(1);
    CountDownLatch releaseDiagnosis = new CountDownLatch(1);
    PodAllocator slowToExplain =
        (pod, candidates, unallocated, state, v, deadline) -> {
          if (!"p1".equals(pod.getMetadata().getName())) {
            return allocator.allocate(pod, candidates, unallocated, state, v, deadline);
          }
          return new PodAllocator.Decision.Unexplained(
              () -> {
                inDiagnosis.countDown();
                try {
                  releaseDiagnosis.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  throw new IllegalStateException(e);
                }
                return new PodAllocator.Decision.NotPlaced(
                    "claim x: worked out", Map.of("x", "worked out"), "Unsatisfiable");
              });
        };
    PodScheduling s =
        new PodScheduling(
            view,
            new RecentWrites(),
            claims,
            pods,
            binder,
            new EventRecorder(client, K.SCHEDULER, Clock.systemUTC()),
            slowToExplain,
            TemplateMode.OWN,
            ClaimTracer.NOOP);
    for (String name : List.of("p1", "p2")) {
      assertThat(s.schedule(create(K.podWithTemplate(name, "gpu", "tpl"))))
          .isInstanceOf(Outcome.Waiting.class);
    }
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      Future<Outcome> first = executor.submit(() -> s.schedule(get("p1")));
      inDiagnosis.await();

      assertThat(s.schedule(get("p2"))).isEqualTo(new Outcome.Bound("node-a"));
      releaseDiagnosis.countDown();
      assertThat(first.get())
          .isEqualTo(
              new Outcome.Unschedulable(
                  "claim x: worked out", Map.of("x", "worked out"), "Unsatisfiable"));
    } finally {
      releaseDiagnosis.countDown();
      executor.shutdownNow();
    }
  }

  @Test
  void aRefusedReservationReleasesEveryDeviceTheAttemptAssumed() {
    client.resource(K.claim("one").build()).create();
    // "two" cannot take another consumer: its reservation is refused after "one"'s was written
    var full = K.claim("two");
    for (int i = 0; i < Upstream.MAX_RESERVED_FOR; i++) {
      full.editOrNewStatus()
          .addNewReservedFor()
          .withResource("pods")
          .withName("other-" + i)
          .withUid("uid-other-" + i)
          .endReservedFor()
          .endStatus();
    }
    client.resource(full.build()).create();
    Pod pod = create(K.podWithClaims("web", "a", "one", "b", "two"));
    RecentWrites recent = new RecentWrites();
    PodScheduling s = newScheduling(TemplateMode.OWN, recent);

    assertThat(s.schedule(pod)).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(claim("one").getStatus().getAllocation()).isNull();
    assertThat(claim("two").getStatus().getAllocation()).isNull();

    // both devices of the node are free again: a pod needing two gets both
    client.resource(K.claim("three").build()).create();
    client.resource(K.claim("four").build()).create();
    Pod next = create(K.podWithClaims("next", "a", "three", "b", "four"));
    assertThat(s.schedule(next)).isEqualTo(new Outcome.Bound("node-a"));
  }

  @Test
  void restartBetweenCreateAndStatusWriteReusesTheClaim() {
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));
    // What a crash right after the create leaves behind: the claim, no pod status entry.
    ResourceClaim orphan = client.resource(K.generated("web-gpu-x1y2z", pod, "gpu")).create();

    // A fresh process: new scheduling with empty memory of its own writes.
    newScheduling(TemplateMode.OWN).schedule(pod);

    assertThat(allClaims()).hasSize(1);
    assertThat(get("web").getStatus().getResourceClaimStatuses())
        .singleElement()
        .satisfies(
            s -> assertThat(s.getResourceClaimName()).isEqualTo(orphan.getMetadata().getName()));
  }

  /**
   * The informer lags behind an allocation this process wrote for longer than any timeout (a
   * relist, a slow watch): the device stays taken, so a second claim cannot get it; once the
   * informer shows the written version, the informer answers for the claim alone.
   */
  @Test
  void anAllocationTheInformerHasNotShownKeepsItsDeviceHoweverLongItLags() {
    allocator = new FakeAllocator(1);
    RecentWrites recent = new RecentWrites();
    PodScheduling s = newScheduling(TemplateMode.OWN, recent);
    ResourceClaim one = client.resource(K.claim("one").build()).create();
    client.resource(K.claim("two").build()).create();
    view.frozen.put("one", one);

    assertThat(s.schedule(create(K.podWithClaims("first", "gpu", "one"))))
        .isEqualTo(new Outcome.Bound("node-a"));
    // (no clock decides: until this fix, what was remembered went after one minute)

    Outcome second = s.schedule(create(K.podWithClaims("second", "gpu", "two")));
    assertThat(second).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(claim("two").getStatus() == null ? null : claim("two").getStatus().getAllocation())
        .as("the only device is held by claim one")
        .isNull();

    // the informer catches up: what was remembered goes, the informer's copy holds the device
    view.frozen.clear();
    assertThat(s.schedule(create(K.podWithClaims("third", "gpu", "two"))))
        .isInstanceOf(Outcome.Unschedulable.class);
    assertThat(recent.assumes(one.getMetadata().getUid())).isFalse();
  }

  @Test
  void aClaimCreatedButNotYetInTheInformerIsNotCreatedTwice() {
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));
    scheduling.schedule(pod);
    // The informer lags: neither the claim nor the pod status is visible yet.
    view.hidden.add(allClaims().get(0).getMetadata().getName());
    scheduling.schedule(pod);
    assertThat(allClaims()).hasSize(1);
  }

  @Test
  void adoptModeWaitsForKubeControllerManager() {
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));
    PodScheduling adopt = newScheduling(TemplateMode.ADOPT);
    assertThat(adopt.schedule(pod)).isInstanceOf(Outcome.Waiting.class);
    assertThat(allClaims()).isEmpty();
    client.resource(K.generated("web-gpu-kcm01", pod, "gpu")).create();
    // kube-controller-manager records the claim in the pod's status after creating it; the
    // kubelet finds it only there, so the pod is not bound before
    assertThat(adopt.schedule(pod)).isInstanceOf(Outcome.Waiting.class);
    Pod recorded =
        client
            .resource(
                new PodBuilder(pod)
                    .editOrNewStatus()
                    .addNewResourceClaimStatus()
                    .withName("gpu")
                    .withResourceClaimName("web-gpu-kcm01")
                    .endResourceClaimStatus()
                    .endStatus()
                    .build())
            .updateStatus();
    assertThat(adopt.schedule(recorded)).isEqualTo(new Outcome.Bound("node-a"));
  }

  @Test
  void missingTemplateIsReportedOnThePod() {
    Pod pod = create(K.podWithTemplate("web", "gpu", "nope"));
    assertThat(scheduling.schedule(pod))
        .isEqualTo(
            new Outcome.Unschedulable(
                "pod claim entry gpu: ResourceClaimTemplate nope does not exist",
                Map.of(),
                "ClaimMissing"));
    assertThat(client.v1().events().inNamespace(NS).list().getItems())
        .anySatisfy(
            e -> {
              assertThat(e.getReason()).isEqualTo("FailedResourceClaimCreation");
              assertThat(e.getMessage()).contains("\"nope\"");
              assertThat(e.getInvolvedObject().getName()).isEqualTo("web");
            });
    client.resource(K.template("nope")).create();
    scheduling.schedule(pod);
    assertThat(allClaims()).hasSize(1);
  }

  /**
   * A claim the API server refuses (its validation, an admission policy, a quota) is reported on
   * the pod with the API server's own message, as upstream's claim controller reports it
   * ("FailedResourceClaimCreation", "PodResourceClaim <entry>: create ResourceClaim <name>: ..."),
   * and the pod waits as unschedulable instead of failing its reconcile.
   */
  @Test
  void aClaimTheApiServerRefusesIsReportedOnThePodWithTheApiServersMessage() {
    String refusal =
        "ResourceClaim.resource.k8s.io \"web-gpu-\" is forbidden: ValidatingAdmissionPolicy"
            + " 'claims-need-a-team' with binding 'claims-need-a-team' denied request: every"
            + " claim needs a team label";
    server
        .expect()
        .post()
        .withPath("/apis/resource.k8s.io/v1/namespaces/" + NS + "/resourceclaims")
        .andReturn(
            403,
            new io.fabric8.kubernetes.api.model.StatusBuilder()
                .withStatus("Failure")
                .withReason("Forbidden")
                .withCode(403)
                .withMessage(refusal)
                .build())
        .once();
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));
    Outcome outcome = scheduling.schedule(pod);
    assertThat(outcome).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(((Outcome.Unschedulable) outcome).message()).endsWith(refusal);
    assertThat(client.v1().events().inNamespace(NS).list().getItems())
        .anySatisfy(
            e -> {
              assertThat(e.getReason()).isEqualTo("FailedResourceClaimCreation");
              assertThat(e.getMessage())
                  .isEqualTo("PodResourceClaim gpu: create ResourceClaim web-gpu-: " + refusal);
              assertThat(e.getInvolvedObject().getName()).isEqualTo("web");
            });
    assertThat(allClaims()).isEmpty();
    // once the API server accepts it, the next attempt creates it
    scheduling.schedule(pod);
    assertThat(allClaims()).hasSize(1);
  }

  @Test
  void aMissingClaimMakesThePodUnschedulableWithTheName() {
    Pod pod = K.podWithClaim("web", "shared", "no-such-claim");
    assertThat(scheduling.schedule(create(pod)))
        .isEqualTo(
            new Outcome.Unschedulable(
                "pod claim entry shared: ResourceClaim no-such-claim does not exist",
                Map.of(),
                "ClaimMissing"));
  }

  @Test
  void aClaimBeingDeletedMakesThePodUnschedulableWithTheName() {
    // kept by its delete-protection finalizer while another pod uses it: the new pod says why
    ResourceClaim kept =
        client
            .resource(
                K.claim("c")
                    .editMetadata()
                    .withFinalizers("resource.kubernetes.io/delete-protection")
                    .endMetadata()
                    .build())
            .create();
    client.resource(kept).delete();
    assertThat(claim("c").getMetadata().getDeletionTimestamp()).isNotNull();
    Pod pod = create(K.podWithClaim("web", "gpu", "c"));

    assertThat(scheduling.schedule(pod))
        .isEqualTo(
            new Outcome.Unschedulable(
                "pod claim entry gpu: ResourceClaim c is being deleted",
                Map.of(),
                "ClaimBeingDeleted"));
  }

  @Test
  void conflictOnStatusWriteIsRetriedWithAFreshRead() {
    client.resource(K.claim("c").build()).create();
    Pod pod = create(K.podWithClaim("web", "gpu", "c"));
    server
        .expect()
        .put()
        .withPath("/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c/status")
        .andReturn(409, new StatusBuilder().withCode(409).withReason("Conflict").build())
        .once();

    assertThat(scheduling.schedule(pod)).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(claim("c").getStatus().getReservedFor()).hasSize(1);
  }

  @Test
  void claimAllocatedMeanwhileMakesTheDecisionStaleAndRollsBack() {
    client.resource(K.claim("one").build()).create();
    client.resource(K.claim("two").build()).create();
    Pod pod = create(K.podWithClaims("web", "a", "one", "b", "two"));
    // Another writer allocates "two" after our informer saw it free.
    ResourceClaim stale = claim("two");
    client
        .resource(
            K.allocated(K.claim("two"), K.pod("other").build())
                .editMetadata()
                .withResourceVersion(null)
                .endMetadata()
                .build())
        .update();
    ApiView lagging =
        new ApiView(client) {
          @Override
          public Optional<ResourceClaim> claim(String namespace, String name) {
            return "two".equals(name) ? Optional.of(stale) : super.claim(namespace, name);
          }

          @Override
          public List<ResourceClaim> claims() {
            return super.claims().stream()
                .map(c -> "two".equals(c.getMetadata().getName()) ? stale : c)
                .toList();
          }
        };
    PodScheduling s =
        new PodScheduling(
            lagging,
            new RecentWrites(),
            claims,
            pods,
            binder,
            new EventRecorder(client, K.SCHEDULER, Clock.systemUTC()),
            allocator,
            TemplateMode.OWN,
            ClaimTracer.NOOP);

    assertThat(s.schedule(pod)).isInstanceOf(Outcome.Retry.class);
    ResourceClaim one = claim("one");
    assertThat(one.getStatus().getAllocation()).isNull();
    assertThat(one.getStatus().getReservedFor()).isEmpty();
    assertThat(one.getMetadata().getFinalizers()).doesNotContain(Upstream.FINALIZER);
    assertThat(get("web").getSpec().getNodeName()).isNull();
  }

  @Test
  void restartBetweenReservationAndBindingBindsWhereTheAllocationIs() {
    client.nodes().resource(K.readyNode("node-b")).create();
    client.resource(K.claim("c").build()).create();
    Pod pod = create(K.podWithClaim("web", "gpu", "c"));
    // What a crash after the status write leaves: allocated on node-b, reserved, pod unbound.
    claims.reserve(NS, "c", pod, FakeAllocator.result("node-b", "dev-0"), java.util.Map.of());

    assertThat(newScheduling(TemplateMode.OWN).schedule(pod))
        .isEqualTo(new Outcome.Bound("node-b"));
    assertThat(allocator.calls).isZero();
    assertThat(claim("c").getStatus().getReservedFor()).hasSize(1);
  }

  @Test
  void sharedClaimIsAllocatedOnceAndReservedForEveryPod() {
    client.resource(K.claim("shared").build()).create();
    for (String name : List.of("p1", "p2")) {
      Pod pod = create(K.podWithClaim(name, "gpu", "shared"));
      assertThat(scheduling.schedule(pod)).isEqualTo(new Outcome.Bound("node-a"));
    }
    assertThat(allocator.calls).isEqualTo(1);
    assertThat(claim("shared").getStatus().getReservedFor())
        .extracting(r -> r.getName())
        .containsExactly("p1", "p2");
  }

  @Test
  void twoPodsNeverGetTheSameDevice() {
    client.resource(K.template("tpl")).create();
    for (String name : List.of("p1", "p2", "p3")) {
      Pod pod = create(K.podWithTemplate(name, "gpu", "tpl"));
      scheduling.schedule(pod);
      scheduling.schedule(get(name));
    }
    assertThat(allClaims())
        .filteredOn(c -> c.getStatus() != null && c.getStatus().getAllocation() != null)
        .extracting(c -> c.getStatus().getAllocation().getDevices().getResults().get(0).getDevice())
        .containsExactlyInAnyOrder("dev-0", "dev-1");
    Outcome third = scheduling.schedule(get("p3"));
    assertThat(third).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(((Outcome.Unschedulable) third).message()).contains("no device left");
  }

  @Test
  void dracoreAllocatorHandsOutEachDeviceOnceAndExplainsTheRest() {
    client.resource(AllocFixtures.deviceClass("gpu")).create();
    client
        .resource(
            AllocFixtures.slice(
                    "node-a-gpu",
                    "node-a",
                    AllocFixtures.device("gpu-0").build(),
                    AllocFixtures.device("gpu-1").build())
                .build())
        .create();
    allocator = null;
    PodScheduling real =
        new PodScheduling(
            view,
            new RecentWrites(),
            claims,
            pods,
            binder,
            new EventRecorder(client, K.SCHEDULER, Clock.systemUTC()),
            new DraCorePodAllocator(
                AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "share")),
            TemplateMode.OWN,
            ClaimTracer.NOOP);
    client.resource(K.template("tpl")).create();
    for (String name : List.of("p1", "p2", "p3")) {
      real.schedule(create(K.podWithTemplate(name, "gpu", "tpl")));
    }
    assertThat(real.schedule(get("p1"))).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(real.schedule(get("p2"))).isEqualTo(new Outcome.Bound("node-a"));
    Outcome third = real.schedule(get("p3"));

    assertThat(allClaims())
        .filteredOn(c -> c.getStatus() != null && c.getStatus().getAllocation() != null)
        .extracting(c -> c.getStatus().getAllocation().getDevices().getResults().get(0).getDevice())
        .containsExactlyInAnyOrder("gpu-0", "gpu-1");
    assertThat(third).isInstanceOf(Outcome.Unschedulable.class);
    Outcome.Unschedulable u = (Outcome.Unschedulable) third;
    assertThat(u.perClaim()).hasSize(1);
    assertThat(u.message()).startsWith("claim p3-gpu-").contains("request \"gpu\"");
  }

  @Test
  void noFeasibleNodeIsUnschedulableWithTheFilterSummary() {
    client.nodes().withName("node-a").delete();
    Pod pod = create(K.pod("web").build());
    Outcome o = scheduling.schedule(pod);
    assertThat(o).isInstanceOf(Outcome.Unschedulable.class);
    assertThat(pods.markUnschedulable(pod, ((Outcome.Unschedulable) o).message())).isTrue();
    assertThat(pods.markUnschedulable(get("web"), ((Outcome.Unschedulable) o).message()))
        .as("unchanged condition is not rewritten")
        .isFalse();
    assertThat(get("web").getStatus().getConditions())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getType()).isEqualTo("PodScheduled");
              assertThat(c.getStatus()).isEqualTo("False");
              assertThat(c.getReason()).isEqualTo("Unschedulable");
              assertThat(c.getMessage()).isEqualTo("0/0 nodes are available.");
            });
  }

  @Test
  void podDeletedBeforeBindingLeavesNothingBehind() {
    client.resource(K.template("tpl")).create();
    Pod pod = create(K.podWithTemplate("web", "gpu", "tpl"));
    scheduling.schedule(pod);
    ResourceClaim c = allClaims().get(0);
    // Allocated and reserved, but the bind never happened (e.g. the pod was deleted first).
    claims.reserve(
        NS,
        c.getMetadata().getName(),
        pod,
        FakeAllocator.result("node-a", "dev-0"),
        java.util.Map.of());
    client.pods().inNamespace(NS).withName("web").delete();

    CleanupPlan plan =
        claims.cleanup(
            NS,
            c.getMetadata().getName(),
            (ns, name) -> Optional.ofNullable(client.pods().inNamespace(ns).withName(name).get()));

    assertThat(plan.deallocate()).isTrue();
    assertThat(plan.delete()).isTrue();
    assertThat(allClaims()).isEmpty();
  }

  @Test
  void boundPodGetsItsAllocatedClaimReserved() {
    client.resource(K.allocated(K.claim("c")).build()).create();
    Pod pod =
        create(
            K.pod("web")
                .editSpec()
                .withNodeName("node-a")
                .addNewResourceClaim()
                .withName("gpu")
                .withResourceClaimName("c")
                .endResourceClaim()
                .endSpec()
                .build());
    scheduling.reserveForBoundPod(pod);
    assertThat(claim("c").getStatus().getReservedFor())
        .extracting(r -> r.getName())
        .containsExactly("web");
  }
}
