package io.kdra.claimcontroller.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The two controllers joined over one informer per kind. */
class PeerEventSourceTest {

  static Pod pod(String name) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("ns")
        .endMetadata()
        .build();
  }

  static ResourceClaim claim(String name) {
    return new ResourceClaimBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("ns")
        .endMetadata()
        .build();
  }

  final SharedInformers shared = new SharedInformers();
  final List<String> claimEventsSeen = new ArrayList<>();

  /** In the pod controller: claim events to the pod named like the claim, deletes marked. */
  final PeerEventSource<Pod, ResourceClaim> inPodController =
      new PeerEventSource<>(
          ResourceClaim.class,
          shared.pods(),
          shared.claims(),
          (c, deleted) -> {
            claimEventsSeen.add(c.getMetadata().getName() + (deleted ? " deleted" : ""));
            return Set.of(new ResourceID(c.getMetadata().getName(), "ns"));
          },
          Duration.ofSeconds(30));

  /** In the claim controller: pod events to the claim named like the pod. */
  final PeerEventSource<ResourceClaim, Pod> inClaimController =
      new PeerEventSource<>(
          Pod.class,
          shared.claims(),
          shared.pods(),
          (p, deleted) -> Set.of(new ResourceID(p.getMetadata().getName(), "ns")),
          Duration.ofSeconds(30));

  @Test
  void eachControllersPrimaryEventsReachTheOtherControllersReconciles() {
    List<ResourceID> podsToReconcile = new ArrayList<>();
    List<ResourceID> claimsToReconcile = new ArrayList<>();
    inPodController.setEventHandler(e -> podsToReconcile.add(e.getRelatedCustomResourceID()));
    inClaimController.setEventHandler(e -> claimsToReconcile.add(e.getRelatedCustomResourceID()));

    // the claim controller's primary informer sees a claim: the pod controller is told
    inClaimController.onResourceCreated(claim("a"));
    inClaimController.onResourceDeleted(claim("b"));
    // the pod controller's primary informer sees a pod: the claim controller is told
    inPodController.onResourceUpdated(pod("x"), pod("x"));

    assertThat(claimEventsSeen).containsExactly("a", "b deleted");
    assertThat(podsToReconcile)
        .containsExactly(new ResourceID("a", "ns"), new ResourceID("b", "ns"));
    assertThat(claimsToReconcile).containsExactly(new ResourceID("x", "ns"));
  }

  @Test
  void eventsBeforeRegistrationAreDropped() {
    inClaimController.onResourceCreated(claim("early"));
    assertThat(claimEventsSeen).isEmpty();
  }

  @Test
  void neitherControllerStartsBeforeTheOthersInformerHasSynced() throws Exception {
    List<Event> events = new ArrayList<>();
    inPodController.setEventHandler(events::add);
    CompletableFuture<Void> podSide = CompletableFuture.runAsync(inPodController::start);
    // the claim informer has not synced: the pod side cannot be running, whatever its progress
    assertThat(inPodController.isRunning()).isFalse();

    inClaimController.start();
    podSide.get(30, TimeUnit.SECONDS);
    assertThat(inPodController.isRunning()).isTrue();
    assertThat(inClaimController.isRunning()).isTrue();
  }

  /**
   * A peer whose first list keeps failing (its informer retries) no longer stops the operator: the
   * start goes on after the wait, and writes wait for every informer instead (SyncedInformers).
   */
  @Test
  void aPeerThatHasNotSyncedInTimeDoesNotStopTheStart() {
    PeerEventSource<Pod, ResourceClaim> impatient =
        new PeerEventSource<>(
            ResourceClaim.class,
            shared.pods(),
            shared.claims(),
            (c, d) -> Set.of(),
            Duration.ofMillis(50));
    impatient.start();
    assertThat(impatient.isRunning()).isTrue();
  }

  @Test
  void aCacheReadBeforeItsOwnerOfferedItSaysSo() {
    assertThatThrownBy(() -> shared.claims().cache())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("ResourceClaim informer is not set up yet");
  }
}
