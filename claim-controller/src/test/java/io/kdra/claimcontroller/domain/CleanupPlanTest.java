package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CleanupPlanTest {

  static final Pod RUNNING =
      K.pod("a")
          .editSpec()
          .withNodeName("node-a")
          .endSpec()
          .withNewStatus()
          .withPhase("Running")
          .endStatus()
          .build();
  static final Pod B = K.pod("b").editSpec().withNodeName("node-a").endSpec().build();

  static Pod phase(Pod p, String phase) {
    return new PodBuilder(p).editOrNewStatus().withPhase(phase).endStatus().build();
  }

  static Pod deleting(Pod p) {
    return new PodBuilder(p)
        .editMetadata()
        .withDeletionTimestamp("2026-01-01T00:00:00Z")
        .endMetadata()
        .build();
  }

  static Pod unbound(Pod p) {
    return new PodBuilder(p).editSpec().withNodeName(null).endSpec().build();
  }

  static Pod replaced(Pod p) {
    return new PodBuilder(p).editMetadata().withUid("uid-new").endMetadata().build();
  }

  /** Expected: kept pod names, status written, deallocate, finalizer removed, deleted. */
  record Want(
      List<String> kept, boolean status, boolean dealloc, boolean unfinalize, boolean delete) {}

  static Stream<Arguments> cases() {
    ResourceClaim shared = K.allocated(K.claim("shared"), RUNNING, B).build();
    ResourceClaim one = K.allocated(K.claim("one"), RUNNING).build();
    ResourceClaim gen =
        K.allocated(new ResourceClaimBuilder(K.generated("gen", RUNNING, "gpu")), RUNNING).build();
    ResourceClaim genFree = K.generated("gen", RUNNING, "gpu");
    ResourceClaim deletingFree =
        K.allocated(K.claim("del"))
            .editMetadata()
            .withDeletionTimestamp("2026-01-01T00:00:00Z")
            .endMetadata()
            .build();
    ResourceClaim neverReserved = K.allocated(K.claim("pre")).build();
    ResourceClaim deletingInUse =
        K.allocated(K.claim("in-use"), RUNNING)
            .editMetadata()
            .withDeletionTimestamp("2026-01-01T00:00:00Z")
            .endMetadata()
            .build();
    ResourceClaim deletingUnallocated =
        K.claim("protected")
            .editMetadata()
            .addToFinalizers(Upstream.FINALIZER)
            .withDeletionTimestamp("2026-01-01T00:00:00Z")
            .endMetadata()
            .build();
    return Stream.of(
        Arguments.of(
            Named.of("all pods running: nothing", one),
            Map.of("a", RUNNING),
            new Want(List.of("a"), false, false, false, false)),
        Arguments.of(
            Named.of("pod gone: unreserve, deallocate, unfinalize", one),
            Map.of(),
            new Want(List.of(), true, true, true, false)),
        Arguments.of(
            Named.of("pod succeeded: same", one),
            Map.of("a", phase(RUNNING, "Succeeded")),
            new Want(List.of(), true, true, true, false)),
        Arguments.of(
            Named.of("pod replaced (new UID): same", one),
            Map.of("a", replaced(RUNNING)),
            new Want(List.of(), true, true, true, false)),
        Arguments.of(
            Named.of("bound pod being deleted still runs: keep", one),
            Map.of("a", deleting(RUNNING)),
            new Want(List.of("a"), false, false, false, false)),
        Arguments.of(
            Named.of("unbound pod being deleted is done: release", one),
            Map.of("a", deleting(unbound(RUNNING))),
            new Want(List.of(), true, true, true, false)),
        Arguments.of(
            Named.of("shared claim, one of two pods gone: keep allocation", shared),
            Map.of("b", B),
            new Want(List.of("b"), true, false, false, false)),
        Arguments.of(
            Named.of("generated claim, owner failed: release and delete", gen),
            Map.of("a", phase(RUNNING, "Failed")),
            new Want(List.of(), true, true, true, true)),
        Arguments.of(
            Named.of("generated claim, owner gone: release and delete", gen),
            Map.of(),
            new Want(List.of(), true, true, true, true)),
        Arguments.of(
            Named.of("generated unallocated claim, owner running: nothing", genFree),
            Map.of("a", RUNNING),
            new Want(List.of(), false, false, false, false)),
        Arguments.of(
            Named.of("generated unallocated claim, owner gone: delete", genFree),
            Map.of(),
            new Want(List.of(), false, false, false, true)),
        Arguments.of(
            Named.of("deleted while allocated and unreserved: deallocate first", deletingFree),
            Map.of(),
            new Want(List.of(), true, true, true, false)),
        Arguments.of(
            Named.of("deleted while in use, pod running: keep", deletingInUse),
            Map.of("a", RUNNING),
            new Want(List.of("a"), false, false, false, false)),
        Arguments.of(
            Named.of("deleted while in use, then pod gone: release", deletingInUse),
            Map.of(),
            new Want(List.of(), true, true, true, false)),
        Arguments.of(
            Named.of("deleted, never allocated, finalizer: unfinalize", deletingUnallocated),
            Map.of(),
            new Want(List.of(), false, false, true, false)),
        Arguments.of(
            Named.of("allocated ahead of use, never reserved: keep", neverReserved),
            Map.of(),
            new Want(List.of(), false, false, false, false)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void followsUpstreamRules(ResourceClaim claim, Map<String, Pod> pods, Want want) {
    CleanupPlan plan = CleanupPlan.of(claim, (ns, name) -> Optional.ofNullable(pods.get(name)));
    assertThat(plan.reservedFor().stream().map(r -> r.getName()).collect(Collectors.toList()))
        .isEqualTo(want.kept());
    assertThat(plan.statusChanged()).as("status written").isEqualTo(want.status());
    assertThat(plan.deallocate()).as("deallocate").isEqualTo(want.dealloc());
    assertThat(plan.removeFinalizer()).as("finalizer removed").isEqualTo(want.unfinalize());
    assertThat(plan.delete()).as("deleted").isEqualTo(want.delete());
  }

  /** The group "train" of PodGroupClaimsTest, with its UID, or gone. */
  static PodSource groups(Map<String, Pod> pods, boolean trainExists) {
    return new PodSource() {
      @Override
      public Optional<Pod> pod(String namespace, String name) {
        return Optional.ofNullable(pods.get(name));
      }

      @Override
      public boolean podGroupGone(String namespace, String name, String uid) {
        return !(trainExists && name.equals("train") && uid.equals("uid-pg-train"));
      }
    };
  }

  static Stream<Arguments> groupCases() {
    ResourceClaim reservedForGroup =
        K.allocated(
                new ResourceClaimBuilder(
                    PodGroupClaimsTest.groupClaim("train-gpu-abcde", "uid-pg-train", "gpu")))
            .editStatus()
            .withReservedFor(PodGroupClaimsTest.GROUP.consumer())
            .endStatus()
            .build();
    ResourceClaim ofOldGroup =
        K.allocated(
                new ResourceClaimBuilder(
                    PodGroupClaimsTest.groupClaim("train-gpu-old00", "uid-pg-old", "gpu")))
            .editStatus()
            .withReservedFor(
                new io.fabric8.kubernetes.api.model.resource.v1
                        .ResourceClaimConsumerReferenceBuilder(PodGroupClaimsTest.GROUP.consumer())
                    .withUid("uid-pg-old")
                    .build())
            .endStatus()
            .build();
    return Stream.of(
        Arguments.of(
            Named.of("the group exists, its members gone: kept reserved", reservedForGroup),
            true,
            new Want(List.of("train"), false, false, false, false)),
        Arguments.of(
            Named.of("the group is gone: unreserved, deallocated, deleted", reservedForGroup),
            false,
            new Want(List.of(), true, true, true, true)),
        Arguments.of(
            Named.of("a group of that name with another UID: as gone", ofOldGroup),
            true,
            new Want(List.of(), true, true, true, true)));
  }

  /** Upstream's syncClaim for PodGroup reservations, and the garbage collector for its claims. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("groupCases")
  void aPodGroupsReservationAndClaimGoWithTheGroup(
      ResourceClaim claim, boolean groupExists, Want want) {
    CleanupPlan plan = CleanupPlan.of(claim, groups(Map.of(), groupExists));
    assertThat(plan.reservedFor().stream().map(r -> r.getName()).collect(Collectors.toList()))
        .isEqualTo(want.kept());
    assertThat(plan.statusChanged()).as("status written").isEqualTo(want.status());
    assertThat(plan.deallocate()).as("deallocate").isEqualTo(want.dealloc());
    assertThat(plan.removeFinalizer()).as("finalizer removed").isEqualTo(want.unfinalize());
    assertThat(plan.delete()).as("deleted").isEqualTo(want.delete());
  }
}
