package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RecentWritesTest {

  private final RecentWrites recent = new RecentWrites();

  private static ResourceClaim claim(String uid) {
    return claim(uid, "1");
  }

  private static ResourceClaim claim(String uid, String resourceVersion) {
    return new ResourceClaimBuilder()
        .withNewMetadata()
        .withNamespace("ns")
        .withName("c-" + uid)
        .withUid(uid)
        .withResourceVersion(resourceVersion)
        .endMetadata()
        .withNewSpec()
        .endSpec()
        .build();
  }

  private static AllocationResult allocation(String device) {
    return new AllocationResultBuilder()
        .withNewDevices()
        .addNewResult()
        .withRequest("gpu")
        .withDriver("gpu.kdra.io")
        .withPool("node-a")
        .withDevice(device)
        .endResult()
        .endDevices()
        .build();
  }

  private static ResourceClaim allocated(ResourceClaim c, AllocationResult a) {
    return new ResourceClaimBuilder(c).editOrNewStatus().withAllocation(a).endStatus().build();
  }

  private static List<String> uids(List<ResourceClaim> claims) {
    return claims.stream().map(c -> c.getMetadata().getUid()).toList();
  }

  @Test
  void aCreatedClaimCountsUntilTheInformerHasItAndNeverTwice() {
    recent.created(claim("a"));
    assertThat(uids(recent.overlay(List.of(claim("b"))))).containsExactly("b", "a");
    assertThat(uids(recent.overlay(List.of(claim("a"), claim("b"))))).containsExactly("a", "b");
  }

  @Test
  void aWrittenAllocationIsAssumedUntilTheInformerShowsItsVersionThenTheInformerIsTheTruth() {
    recent.allocated("a", allocation("gpu-0"));
    recent.allocationWritten("a", allocation("gpu-0"), "12");
    assertThat(recent.withAssumed(claim("a", "11")).getStatus().getAllocation())
        .isEqualTo(allocation("gpu-0"));
    // the informer caught up (with whatever it says) ...
    assertThat(
            recent
                .withAssumed(allocated(claim("a", "12"), allocation("gpu-1")))
                .getStatus()
                .getAllocation())
        .isEqualTo(allocation("gpu-1"));
    // ... so a later deallocation it shows is not undone by the remembered write
    assertThat(recent.withAssumed(claim("a", "13")).getStatus()).isNull();
    assertThat(recent.assumes("a")).isFalse();
  }

  /** How the write ended, and the version the informer shows: does the assumption still stand? */
  static Stream<Arguments> informerVersions() {
    return Stream.of(
        Arguments.of("in flight: even a newer copy may predate the write", null, null, "99", true),
        Arguments.of("stored as 12, the informer shows 11", "12", null, "11", true),
        Arguments.of("stored as 12, the informer shows 12", "12", null, "12", false),
        Arguments.of("stored as 12, the informer shows 13", "12", null, "13", false),
        Arguments.of("stored as 12, compared as integers: 9 < 12", "12", null, "9", true),
        Arguments.of("stored as 12, compared as integers: 100 > 12", "12", null, "100", false),
        Arguments.of("sent on 11 unanswered, the informer shows 11", null, "11", "11", true),
        Arguments.of("sent on 11 unanswered, the informer shows 12", null, "11", "12", false),
        Arguments.of("stored as 12, the informer's version no integer", "12", null, "x7", true),
        Arguments.of("stored as no integer: kept until deleted", "x7", null, "99", true),
        Arguments.of("stored as 12, the informer shows no version", "12", null, null, true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("informerVersions")
  void anAssumptionStandsUntilTheInformerShowsTheVersionThatTellsTheTruth(
      String name, String stored, String sentOn, String informer, boolean stands) {
    recent.allocated("a", allocation("gpu-0"));
    if (stored != null) {
      recent.allocationWritten("a", allocation("gpu-0"), stored);
    } else if (sentOn != null) {
      recent.allocationMayHaveLanded("a", allocation("gpu-0"), "ns", "claim", sentOn);
    }
    ResourceClaim shown = recent.withAssumed(claim("a", informer));
    assertThat(shown.getStatus() != null && shown.getStatus().getAllocation() != null)
        .isEqualTo(stands);
    assertThat(recent.assumes("a")).isEqualTo(stands);
  }

  @Test
  void anAttemptThatFailedBeforeItsWriteForgetsOnlyWhatWasNeverSent() {
    recent.allocated("unsent", allocation("gpu-0"));
    recent.allocated("sent", allocation("gpu-1"));
    recent.allocationMayHaveLanded("sent", allocation("gpu-1"), "ns", "claim", "11");
    recent.forgetUnsent("unsent", allocation("gpu-0"));
    recent.forgetUnsent("sent", allocation("gpu-1"));
    assertThat(recent.assumes("unsent")).isFalse();
    assertThat(recent.assumes("sent")).isTrue();
  }

  /**
   * Only an allocation whose write ended without an answer is to be sent again, and only until the
   * informer tells the truth about it.
   */
  @Test
  void onlyAnAllocationSentWithoutAnAnswerIsUnansweredUntilTheInformerTells() {
    recent.allocated("in-flight", allocation("gpu-0"));
    recent.allocated("stored", allocation("gpu-1"));
    recent.allocationWritten("stored", allocation("gpu-1"), "12");
    recent.allocated("lost", allocation("gpu-2"));
    recent.allocationMayHaveLanded("lost", allocation("gpu-2"), "ns", "claim", "11");
    assertThat(recent.unanswered("in-flight")).isEmpty();
    assertThat(recent.unanswered("stored")).isEmpty();
    assertThat(recent.unanswered("never")).isEmpty();
    assertThat(recent.unanswered("lost").map(RecentWrites.Unanswered::allocation))
        .contains(allocation("gpu-2"));

    // sent again and stored: answered
    recent.allocationWritten("lost", allocation("gpu-2"), "13");
    assertThat(recent.unanswered("lost")).isEmpty();
    assertThat(recent.assumes("lost")).isTrue();
    recent.withAssumed(claim("lost", "13"));
    assertThat(recent.assumes("lost")).isFalse();
  }

  /**
   * The settle acts on an unanswered assumption only as it read it: once a pod attempt has settled
   * it again, what the settle read is no longer current, and forgetting it changes nothing.
   */
  @Test
  void anUnansweredAssumptionSettledAgainIsNoLongerTheOneRead() {
    recent.allocated("lost", allocation("gpu-0"));
    recent.allocationMayHaveLanded("lost", allocation("gpu-0"), "ns", "one", "11");
    RecentWrites.Unanswered read = recent.unanswered().get(0);
    assertThat(read.namespace() + "/" + read.name()).isEqualTo("ns/one");
    assertThat(read.shownFrom()).isEqualTo(12);
    assertThat(recent.isCurrent(read)).isTrue();

    // the pod's next attempt sent it again
    recent.allocationWritten("lost", allocation("gpu-0"), "12");
    assertThat(recent.isCurrent(read)).isFalse();
    assertThat(recent.unanswered()).isEmpty();
    recent.forgetUnanswered(read);
    assertThat(recent.assumes("lost")).isTrue();
  }

  @Test
  void aForgottenAllocationIsNoLongerAssumed() {
    recent.allocated("a", allocation("gpu-0"));
    recent.forgetAllocation("a", allocation("gpu-0"));
    assertThat(recent.withAssumed(claim("a")).getStatus()).isNull();
  }

  @Test
  void theOverlayAppliesRememberedAllocationsToInformedAndCreatedClaims() {
    recent.created(claim("new"));
    recent.allocated("new", allocation("gpu-0"));
    recent.allocated("old", allocation("gpu-1"));
    assertThat(recent.overlay(List.of(claim("old"))))
        .extracting(
            c ->
                c.getMetadata().getUid()
                    + "="
                    + c.getStatus().getAllocation().getDevices().getResults().get(0).getDevice())
        .containsExactly("old=gpu-1", "new=gpu-0");
  }

  /**
   * Nothing expires: a created claim and an assumed allocation go with the informer's deletion of
   * the claim, a pod being bound when the informer shows it bound or no longer shows it.
   */
  @Test
  void entriesGoWhenTheInformerCatchesUpOrShowsTheObjectGone() {
    recent.created(claim("a"));
    recent.allocated("a", allocation("gpu-0"));
    recent.allocationWritten("a", allocation("gpu-0"), "5");
    assertThat(uids(recent.overlay(List.of(claim("b"))))).containsExactly("b", "a");
    recent.claimDeleted("a");
    assertThat(uids(recent.overlay(List.of(claim("b"))))).containsExactly("b");
    assertThat(recent.assumes("a")).isFalse();

    Pod pod = new PodBuilder().withNewMetadata().withName("p").withUid("p1").endMetadata().build();
    recent.binding(pod, "node-a");
    assertThat(recent.assumedBound(p -> Optional.of(pod))).hasSize(1);
    assertThat(recent.isBinding("p1")).isTrue();
    Pod replaced =
        new PodBuilder().withNewMetadata().withName("p").withUid("p2").endMetadata().build();
    assertThat(recent.assumedBound(p -> Optional.of(replaced))).isEmpty();
    assertThat(recent.isBinding("p1")).isFalse();
  }

  /**
   * One assumption per claim: a second, different one for a claim that has one is a bug of its
   * caller, refused, and the first stays as it was.
   */
  @Test
  void aSecondDifferentAssumptionForAClaimIsRefusedAndTheFirstStays() {
    recent.allocated("a", allocation("gpu-0"));
    recent.allocationWritten("a", allocation("gpu-0"), "12");

    assertThatThrownBy(() -> recent.allocated("a", allocation("gpu-1")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("gpu-0")
        .hasMessageContaining("gpu-1");
    assertThat(recent.withAssumed(claim("a", "11")).getStatus().getAllocation())
        .isEqualTo(allocation("gpu-0"));
    assertThat(recent.withAssumed(claim("a", "12")).getStatus()).isNull();
  }

  /**
   * Settling or forgetting an assumption acts only on the allocation it names: another attempt's
   * for the same claim stays as it was.
   */
  @Test
  void settleAndForgetActOnlyOnTheAllocationTheyName() {
    recent.allocated("a", allocation("gpu-0"));

    recent.allocationWritten("a", allocation("gpu-1"), "12");
    recent.allocationMayHaveLanded("a", allocation("gpu-1"), "ns", "claim", "11");
    recent.forgetAllocation("a", allocation("gpu-1"));
    recent.forgetUnsent("a", allocation("gpu-1"));

    // still in flight: even the informer's version 12 does not answer for it
    assertThat(recent.withAssumed(claim("a", "12")).getStatus().getAllocation())
        .isEqualTo(allocation("gpu-0"));
    assertThat(recent.unanswered("a")).isEmpty();
    recent.forgetAllocation("a", allocation("gpu-0"));
    assertThat(recent.assumes("a")).isFalse();
  }
}
