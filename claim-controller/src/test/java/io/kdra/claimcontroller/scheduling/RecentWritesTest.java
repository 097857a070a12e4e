package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

class RecentWritesTest {

  private static final Duration TTL = Duration.ofSeconds(30);

  /** A clock the test moves. */
  private static final class SteppedClock extends Clock {
    private Instant now = Instant.parse("2026-01-01T00:00:00Z");

    void advance(Duration d) {
      now = now.plus(d);
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  private final SteppedClock clock = new SteppedClock();
  private final RecentWrites recent = new RecentWrites(TTL, clock);

  private static ResourceClaim claim(String uid) {
    return new ResourceClaimBuilder()
        .withNewMetadata()
        .withNamespace("ns")
        .withName("c-" + uid)
        .withUid(uid)
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
  void aWrittenAllocationIsAssumedUntilTheInformerShowsOneThenTheInformerIsTheTruth() {
    recent.allocated("a", allocation("gpu-0"));
    assertThat(recent.withAssumed(claim("a")).getStatus().getAllocation())
        .isEqualTo(allocation("gpu-0"));
    // the informer caught up (with whatever it says) ...
    assertThat(
            recent
                .withAssumed(allocated(claim("a"), allocation("gpu-1")))
                .getStatus()
                .getAllocation())
        .isEqualTo(allocation("gpu-1"));
    // ... so a later deallocation it shows is not undone by the remembered write
    assertThat(recent.withAssumed(claim("a")).getStatus()).isNull();
  }

  @Test
  void aForgottenAllocationIsNoLongerAssumed() {
    recent.allocated("a", allocation("gpu-0"));
    recent.forgetAllocation("a");
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

  /** A write the informer never shows was lost: after the TTL the informer's answer stands. */
  @Test
  void entriesExpireAfterTheTtl() {
    recent.created(claim("a"));
    recent.allocated("b", allocation("gpu-0"));
    clock.advance(TTL);
    assertThat(uids(recent.overlay(List.of(claim("b"))))).containsExactly("b", "a");
    clock.advance(Duration.ofMillis(1));
    List<ResourceClaim> after = recent.overlay(List.of(claim("b")));
    assertThat(uids(after)).containsExactly("b");
    assertThat(after.get(0).getStatus()).isNull();
  }
}
