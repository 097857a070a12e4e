package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.claimcontroller.domain.Reservation.Step;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Each case pins what is written (or why nothing is), not only the kind of step. */
class ReservationTest {

  static final Pod POD = K.pod("web").build();
  static final Pod OTHER = K.pod("api").build();
  static final Map<String, String> MARKER = Map.of(Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER);
  static final AllocationResult ALLOC =
      new AllocationResultBuilder()
          .withNewDevices()
          .addNewResult()
          .withRequest("gpu")
          .withDriver("d")
          .withPool("p")
          .withDevice("x")
          .endResult()
          .endDevices()
          .build();

  static Stream<Arguments> cases() {
    ResourceClaim free = K.claim("c").build();
    ResourceClaim taken = K.allocated(K.claim("c")).build();
    ResourceClaim sharedMarked =
        K.allocated(K.claim("c"), OTHER)
            .editMetadata()
            .addToAnnotations(Kdra.SCHEDULER_ANNOTATION, "someone-else")
            .endMetadata()
            .build();
    ResourceClaim mine =
        K.allocated(K.claim("c"), POD)
            .editMetadata()
            .addToAnnotations(Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER)
            .endMetadata()
            .build();
    ResourceClaimBuilder full = K.allocated(K.claim("c"));
    IntStream.range(0, Upstream.MAX_RESERVED_FOR)
        .forEach(
            i ->
                full.editStatus()
                    .addNewReservedFor()
                    .withResource("pods")
                    .withName("p" + i)
                    .withUid("u" + i)
                    .endReservedFor()
                    .endStatus());
    ResourceClaim deleting =
        new ResourceClaimBuilder(taken)
            .editMetadata()
            .withDeletionTimestamp("2026-01-01T00:00:00Z")
            .endMetadata()
            .build();
    // as the controller creates a template's claim: marked, with the finalizer
    ResourceClaim created =
        K.claim("c")
            .editMetadata()
            .addToAnnotations(Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER)
            .addToFinalizers(Upstream.FINALIZER)
            .endMetadata()
            .build();
    String marker = Kdra.SCHEDULER_ANNOTATION + "=" + K.SCHEDULER;
    // what the placement relied on: the claim allocated as K allocates it, its device on node-a
    AllocationResult seen = taken.getStatus().getAllocation();
    ResourceClaim elsewhere =
        K.allocatedOn("gpu.example.com", "node-b", K.claim("c"), OTHER)
            .editMetadata()
            .addToFinalizers(Upstream.FINALIZER)
            .endMetadata()
            .build();
    ResourceClaim otherNodes =
        new ResourceClaimBuilder(taken)
            .editStatus()
            .editAllocation()
            .withNodeSelector(onNode("node-b"))
            .endAllocation()
            .endStatus()
            .build();
    ResourceClaim mineElsewhere =
        K.allocatedOn("gpu.example.com", "node-b", K.claim("c"), POD)
            .editMetadata()
            .addToAnnotations(Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER)
            .endMetadata()
            .build();
    ResourceClaim sameStamped =
        new ResourceClaimBuilder(sharedMarked)
            .editStatus()
            .editAllocation()
            .withAllocationTimestamp("2026-01-01T00:00:00Z")
            .endAllocation()
            .endStatus()
            .build();
    return Stream.of(
        Arguments.of(
            Named.of("claim created with finalizer and marker + allocation: status only", created),
            ALLOC,
            null,
            "status: allocation x, reservedFor [web]"),
        Arguments.of(
            Named.of("free claim + allocation: finalizer and marker, then status", free),
            ALLOC,
            null,
            "metadata: finalizers ["
                + Upstream.FINALIZER
                + "], annotations {"
                + marker
                + "}; status: allocation x, reservedFor [web]"),
        Arguments.of(
            Named.of("allocated meanwhile by someone else", taken),
            ALLOC,
            null,
            "stale: claim c was allocated meanwhile"),
        Arguments.of(
            Named.of("expected allocated but deallocated", free),
            null,
            seen,
            "stale: claim c was deallocated meanwhile"),
        Arguments.of(
            Named.of("shared claim, allocated, unmarked: marker, then the pod", taken),
            null,
            seen,
            "metadata: finalizers ["
                + Upstream.FINALIZER
                + "], annotations {"
                + marker
                + "}; status: allocation gpu-0, reservedFor [web]"),
        Arguments.of(
            Named.of(
                "shared claim, marked by another: its marker kept, no metadata " + "write",
                sharedMarked),
            null,
            seen,
            "status: allocation gpu-0, reservedFor [api, web]"),
        Arguments.of(Named.of("already reserved for the pod", mine), null, seen, "done"),
        Arguments.of(
            Named.of("reservedFor full", full.build()),
            null,
            seen,
            "refused: claim c is already reserved for " + Upstream.MAX_RESERVED_FOR + " consumers"),
        Arguments.of(
            Named.of("claim being deleted", deleting),
            null,
            seen,
            "refused: claim c is being deleted"),
        Arguments.of(
            Named.of("allocated again elsewhere meanwhile", elsewhere),
            null,
            seen,
            "stale: claim c was allocated again meanwhile"),
        Arguments.of(
            Named.of("allocated again, the same device for other nodes", otherNodes),
            null,
            seen,
            "stale: claim c was allocated again meanwhile"),
        Arguments.of(
            Named.of("reserved for the pod, but allocated again elsewhere", mineElsewhere),
            null,
            seen,
            "stale: claim c was allocated again meanwhile"),
        Arguments.of(
            Named.of("the same allocation, stamped since: reserved", sameStamped),
            null,
            seen,
            "status: allocation gpu-0, reservedFor [api, web]"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void writesExactlyThis(
      ResourceClaim claim, AllocationResult alloc, AllocationResult relied, String written) {
    assertThat(describe(Reservation.decide(claim, POD, alloc, relied, MARKER))).isEqualTo(written);
  }

  static NodeSelector onNode(String node) {
    return new NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .addNewMatchField()
        .withKey("metadata.name")
        .withOperator("In")
        .withValues(node)
        .endMatchField()
        .endNodeSelectorTerm()
        .build();
  }

  /**
   * The lost write was made on version 1 of the claim (K's): version 2 on tells whether it landed.
   */
  private static final long SHOWN_FROM = 2;

  static Stream<Arguments> unansweredCases() {
    ResourceClaim created =
        K.claim("c")
            .editMetadata()
            .addToAnnotations(Kdra.SCHEDULER_ANNOTATION, K.SCHEDULER)
            .addToFinalizers(Upstream.FINALIZER)
            .endMetadata()
            .build();
    ResourceClaim landed =
        new ResourceClaimBuilder(created)
            .editOrNewStatus()
            .withAllocation(ALLOC)
            .endStatus()
            .build();
    ResourceClaim landedAndReserved =
        new ResourceClaimBuilder(landed)
            .editStatus()
            .addNewReservedFor()
            .withResource("pods")
            .withName("web")
            .withUid("uid-web")
            .endReservedFor()
            .endStatus()
            .build();
    ResourceClaim someoneElses = K.allocated(created.edit()).build();
    ResourceClaim movedOnWithout =
        new ResourceClaimBuilder(created)
            .editMetadata()
            .withResourceVersion("2")
            .endMetadata()
            .build();
    return Stream.of(
        Arguments.of(
            Named.of("still at the version it was sent on: sent again", created),
            "status: allocation x, reservedFor [web]"),
        Arguments.of(
            Named.of("a newer version without it: it did not land, decide again", movedOnWithout),
            "stale: the allocation of claim c sent without an answer did not land"),
        Arguments.of(
            Named.of("it landed without the reservation: only reserved", landed),
            "status: allocation x, reservedFor [web]"),
        Arguments.of(Named.of("it landed, reserved: nothing to write", landedAndReserved), "done"),
        Arguments.of(
            Named.of("another allocation meanwhile", someoneElses),
            "stale: claim c was allocated meanwhile"));
  }

  /**
   * An allocation sent without an answer, decided again on the claim as read: written where it is
   * missing, reserved where it landed, never over someone else's.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("unansweredCases")
  void anUnansweredAllocationIsSentAgainOnlyWhereItIsMissing(ResourceClaim claim, String written) {
    assertThat(
            describe(
                Reservation.decideUnanswered(
                    claim, PodGroupClaims.podConsumer(POD), ALLOC, SHOWN_FROM, MARKER)))
        .isEqualTo(written);
  }

  /** The status write starts from the metadata write, so it never undoes the finalizer. */
  @Test
  void theStatusWriteCarriesTheMetadataWrite() {
    Step.Write w = (Step.Write) Reservation.decide(K.claim("c").build(), POD, ALLOC, null, MARKER);
    assertThat(w.withStatus().getMetadata()).isEqualTo(w.withFinalizer().getMetadata());
    assertThat(w.withFinalizer().getStatus()).isNull();
    assertThat(w.withStatus().getStatus().getReservedFor())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getResource()).isEqualTo("pods");
              assertThat(r.getUid()).isEqualTo("uid-web");
            });
  }

  /** The claim's writes as one line: what the metadata and the status updates change. */
  static String describe(Step step) {
    if (step instanceof Step.Done) {
      return "done";
    }
    if (step instanceof Step.Stale s) {
      return "stale: " + s.reason();
    }
    if (step instanceof Step.Refused r) {
      return "refused: " + r.reason();
    }
    Step.Write w = (Step.Write) step;
    String meta =
        w.withFinalizer() == null
            ? ""
            : "metadata: finalizers "
                + w.withFinalizer().getMetadata().getFinalizers()
                + ", annotations "
                + new TreeMap<>(w.withFinalizer().getMetadata().getAnnotations())
                    .entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue())
                        .collect(Collectors.joining(", ", "{", "}"))
                + "; ";
    var status = w.withStatus().getStatus();
    List<String> reserved = status.getReservedFor().stream().map(r -> r.getName()).toList();
    return meta
        + "status: allocation "
        + status.getAllocation().getDevices().getResults().get(0).getDevice()
        + ", reservedFor "
        + reserved;
  }

  /**
   * A claim the members of a PodGroup share: the first member writes the allocation with the
   * group's reference, not its own; the next finds the group reserved and writes nothing.
   */
  @Test
  void aSharedClaimIsReservedForTheGroupOnceForAllMembers() {
    var group = PodGroupClaimsTest.GROUP.consumer();

    Step first = Reservation.decide(K.claim("c").build(), group, ALLOC, null, MARKER);

    assertThat(first).isInstanceOf(Step.Write.class);
    ResourceClaim written = ((Step.Write) first).withStatus();
    assertThat(written.getStatus().getReservedFor()).containsExactly(group);
    assertThat(Reservation.decide(written, group, null, ALLOC, MARKER))
        .isInstanceOf(Step.Done.class);
  }

  /**
   * An allocation assumed here and the same one read back from the API server (JSON, with the
   * fields the server or another writer adds) are the same allocation: only devices and nodes
   * count, or every shared claim whose allocation was assumed would look allocated again.
   */
  @Test
  void anAllocationReadBackFromTheApiServerIsTheSameAllocation() {
    // as the allocator builds it: a node-local device
    AllocationResult assumed =
        new AllocationResultBuilder(ALLOC)
            .withNodeSelector(
                new NodeSelectorBuilder()
                    .addNewNodeSelectorTerm()
                    .addToMatchFields(
                        new NodeSelectorRequirementBuilder()
                            .withKey("metadata.name")
                            .withOperator("In")
                            .withValues("node-a")
                            .build())
                    .endNodeSelectorTerm()
                    .build())
            .build();
    String json =
        Serialization.asJson(assumed)
            .replaceFirst("\\{", "{\"allocationTimestamp\":\"2026-01-01T00:00:00Z\",\"later\":1,");
    AllocationResult readBack = Serialization.unmarshal(json, AllocationResult.class);

    assertThat(readBack.getAllocationTimestamp()).isNotNull();
    assertThat(Reservation.sameAllocation(assumed, readBack)).isTrue();
    assertThat(
            Reservation.sameAllocation(
                assumed,
                new AllocationResultBuilder(readBack).withNodeSelector(onNode("node-b")).build()))
        .isFalse();
  }
}
