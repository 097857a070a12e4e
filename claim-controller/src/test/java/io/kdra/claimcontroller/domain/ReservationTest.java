package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.kdra.claimcontroller.domain.Reservation.Step;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ReservationTest {

  static final Pod POD = K.pod("web").build();
  static final java.util.Map<String, String> MARKER = java.util.Map.of(
      Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER);
  static final AllocationResult ALLOC = new AllocationResultBuilder().withNewDevices()
      .addNewResult().withRequest("gpu").withDriver("d").withPool("p").withDevice("x")
      .endResult().endDevices().build();

  static Stream<Arguments> cases() {
    ResourceClaim free = K.claim("c").build();
    ResourceClaim taken = K.allocated(K.claim("c")).build();
    ResourceClaim mine = K.allocated(K.claim("c"), POD).editMetadata()
        .addToAnnotations(Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER).endMetadata().build();
    ResourceClaimBuilder full = K.allocated(K.claim("c"));
    IntStream.range(0, Upstream.MAX_RESERVED_FOR).forEach(i -> full.editStatus()
        .addNewReservedFor().withResource("pods").withName("p" + i).withUid("u" + i)
        .endReservedFor().endStatus());
    ResourceClaim deleting = new ResourceClaimBuilder(taken).editMetadata()
        .withDeletionTimestamp("2026-01-01T00:00:00Z").endMetadata().build();
    return Stream.of(
        Arguments.of(Named.of("free claim + allocation: finalizer, then status", free), ALLOC,
            Step.Write.class),
        Arguments.of(Named.of("allocated meanwhile by someone else: stale", taken), ALLOC,
            Step.Stale.class),
        Arguments.of(Named.of("expected allocated but deallocated: stale", free), null,
            Step.Stale.class),
        Arguments.of(Named.of("shared claim, allocated: add the pod", taken), null,
            Step.Write.class),
        Arguments.of(Named.of("already reserved for the pod: done", mine), null,
            Step.Done.class),
        Arguments.of(Named.of("reservedFor full: refused", full.build()), null,
            Step.Refused.class),
        Arguments.of(Named.of("claim being deleted: refused", deleting), null,
            Step.Refused.class));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void decides(ResourceClaim claim, AllocationResult alloc, Class<? extends Step> want) {
    assertThat(Reservation.decide(claim, POD, alloc, MARKER))
        .isInstanceOf(want);
  }

  @Test
  void allocatingAddsFinalizerBeforeStatusAndReservesThePod() {
    Step.Write w = (Step.Write) Reservation.decide(K.claim("c").build(), POD, ALLOC, MARKER);
    assertThat(w.withFinalizer().getMetadata().getFinalizers()).contains(Upstream.FINALIZER);
    assertThat(w.withFinalizer().getStatus()).isNull();
    assertThat(w.withFinalizer().getMetadata().getAnnotations())
        .containsEntry(Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER);
    assertThat(w.withStatus().getStatus().getAllocation()).isEqualTo(ALLOC);
    assertThat(w.withStatus().getStatus().getReservedFor()).singleElement().satisfies(r -> {
      assertThat(r.getResource()).isEqualTo("pods");
      assertThat(r.getName()).isEqualTo("web");
      assertThat(r.getUid()).isEqualTo("uid-web");
    });
  }
}
