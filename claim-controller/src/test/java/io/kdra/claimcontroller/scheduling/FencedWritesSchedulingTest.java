package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Reservation;
import io.kdra.claimcontroller.domain.SearchDeadline;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.testing.AllocFixtures;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Lease fence is asked right before each write, not only before the decision: a replica whose
 * Lease goes stale while it searches (a long search, a GC pause, SIGSTOP) may meanwhile have been
 * replaced by another leader, which may have given the same device to another claim. Its write must
 * not go out. One device only, so that an assumption left behind would show as "no device free".
 */
@EnableKubernetesMockClient(crud = true)
class FencedWritesSchedulingTest {

  KubernetesClient client;
  final AtomicBoolean leaseFresh = new AtomicBoolean(true);

  /** When set, the fence closes at the device search's first clock reading. */
  final AtomicBoolean leaseGoesStaleDuringTheSearch = new AtomicBoolean();

  /** When set, the fence closes right after the claim's reservation was written. */
  final AtomicBoolean leaseGoesStaleBeforeTheBinding = new AtomicBoolean();

  /** When set, the fence closes right after a claim was created from a template. */
  final AtomicBoolean leaseGoesStaleAfterAClaimIsCreated = new AtomicBoolean();

  final AtomicLong nanos = new AtomicLong();

  final PodBinder binder =
      (pod, node) ->
          client
              .pods()
              .inNamespace(NS)
              .withName(pod.getMetadata().getName())
              .edit(p -> new PodBuilder(p).editSpec().withNodeName(node).endSpec().build());

  PodScheduling scheduling;

  @BeforeEach
  void setUp() {
    client.nodes().resource(K.readyNode("node-a")).create();
    client.resource(AllocFixtures.deviceClass("gpu")).create();
    client
        .resource(
            AllocFixtures.slice("node-a-gpu", "node-a", AllocFixtures.device("gpu-0").build())
                .build())
        .create();
    ClaimWriter claims =
        new ClaimWriter(client, K.SCHEDULER, 3) {
          @Override
          public ResourceClaim create(ResourceClaim desired, Map<String, String> annotations) {
            ResourceClaim created = super.create(desired, annotations);
            if (leaseGoesStaleAfterAClaimIsCreated.get()) {
              leaseFresh.set(false);
            }
            return created;
          }

          @Override
          public Reservation.Step reserve(
              String namespace,
              String name,
              ResourceClaim cached,
              ResourceClaimConsumerReference consumer,
              AllocationResult allocation,
              AllocationResult relied,
              Map<String, String> annotations,
              StatusWrites writes) {
            Reservation.Step step =
                super.reserve(
                    namespace, name, cached, consumer, allocation, relied, annotations, writes);
            if (leaseGoesStaleBeforeTheBinding.get()) {
              leaseFresh.set(false);
            }
            return step;
          }
        };
    scheduling =
        new PodScheduling(
            new ApiView(client),
            new RecentWrites(),
            new PodScheduling.Writers(
                claims,
                new PodWriter(client, 3, Clock.systemUTC()),
                binder,
                new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
            new DraCorePodAllocator(
                AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "share")),
            PodScheduling.Settings.of(TemplateMode.OWN, ClaimTracer.NOOP)
                .fencedBy(leaseFresh::get)
                .searchLimitedBy(
                    new SearchDeadline(Duration.ofSeconds(1), Duration.ofSeconds(10)),
                    () -> {
                      if (leaseGoesStaleDuringTheSearch.get()) {
                        leaseFresh.set(false);
                      }
                      return nanos.addAndGet(1_000);
                    }));
    ResourceClaim claim =
        AllocFixtures.claim("c1", AllocFixtures.request("gpu", "gpu").build()).build();
    claim.getMetadata().setNamespace(NS);
    client.resource(claim).create();
  }

  @Test
  void noAllocationGoesOutOnceTheLeaseWentStaleDuringTheSearch() {
    Pod pod = client.resource(K.podWithClaim("p1", "gpu", "c1")).create();
    leaseGoesStaleDuringTheSearch.set(true);

    Outcome fenced = scheduling.schedule(pod);

    assertThat(fenced).isEqualTo(PodScheduling.FENCED);
    assertThat(claim().getStatus() == null ? null : claim().getStatus().getAllocation()).isNull();
    assertThat(pod().getSpec().getNodeName()).isNull();

    // renewed: the one device was not left assumed, the pod is placed on it
    leaseGoesStaleDuringTheSearch.set(false);
    leaseFresh.set(true);
    assertThat(scheduling.schedule(pod())).isEqualTo(new Outcome.Bound("node-a"));
    assertThat(claim().getStatus().getAllocation()).isNotNull();
  }

  @Test
  void noBindingGoesOutOnceTheLeaseWentStaleAfterTheReservation() {
    Pod pod = client.resource(K.podWithClaim("p1", "gpu", "c1")).create();
    leaseGoesStaleBeforeTheBinding.set(true);

    Outcome fenced = scheduling.schedule(pod);

    assertThat(fenced).isEqualTo(PodScheduling.FENCED);
    assertThat(pod().getSpec().getNodeName()).isNull();
    // the reservation stays, undone by no replica that may no longer write: whoever leads next
    // binds the pod where its claim is allocated
    assertThat(claim().getStatus().getAllocation()).isNotNull();
    assertThat(claim().getStatus().getReservedFor())
        .extracting(r -> r.getUid())
        .containsExactly(pod.getMetadata().getUid());

    leaseGoesStaleBeforeTheBinding.set(false);
    leaseFresh.set(true);
    assertThat(scheduling.schedule(pod())).isEqualTo(new Outcome.Bound("node-a"));
  }

  @Test
  void noFurtherClaimIsCreatedNorRecordedOnceTheLeaseWentStaleDuringTheCreation() {
    client.resource(K.template("t1")).create();
    Pod pod =
        client
            .resource(
                new PodBuilder(K.podWithTemplate("p1", "first", "t1"))
                    .editSpec()
                    .addNewResourceClaim()
                    .withName("second")
                    .withResourceClaimTemplateName("t1")
                    .endResourceClaim()
                    .endSpec()
                    .build())
            .create();
    leaseGoesStaleAfterAClaimIsCreated.set(true);

    Outcome fenced = scheduling.schedule(pod);

    assertThat(fenced).isEqualTo(PodScheduling.FENCED);
    // the first create went out before the Lease went stale; the second waits for a fresh Lease,
    // and the pod's status is not written by a replica that may no longer lead
    assertThat(generatedClaims()).hasSize(1);
    assertThat(pod().getStatus() == null ? null : pod().getStatus().getResourceClaimStatuses())
        .isNullOrEmpty();

    leaseGoesStaleAfterAClaimIsCreated.set(false);
    leaseFresh.set(true);
    scheduling.schedule(pod());
    assertThat(generatedClaims()).hasSize(2);
    assertThat(pod().getStatus().getResourceClaimStatuses()).hasSize(2);
  }

  @Test
  void theClaimsAreNotRecordedInThePodOnceTheLeaseWentStaleAfterTheLastCreation() {
    client.resource(K.template("t1")).create();
    Pod pod = client.resource(K.podWithTemplate("p1", "only", "t1")).create();
    leaseGoesStaleAfterAClaimIsCreated.set(true);

    assertThat(scheduling.schedule(pod)).isEqualTo(PodScheduling.FENCED);
    assertThat(generatedClaims()).hasSize(1);
    assertThat(pod().getStatus() == null ? null : pod().getStatus().getResourceClaimStatuses())
        .isNullOrEmpty();
  }

  List<ResourceClaim> generatedClaims() {
    return client.resources(ResourceClaim.class).inNamespace(NS).list().getItems().stream()
        .filter(c -> !c.getMetadata().getName().equals("c1"))
        .toList();
  }

  ResourceClaim claim() {
    return client.resources(ResourceClaim.class).inNamespace(NS).withName("c1").get();
  }

  Pod pod() {
    return client.pods().inNamespace(NS).withName("p1").get();
  }
}
