package io.kdra.claimcontroller.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.Upstream;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What becomes of an allocation sent without an answer and sent again by no pod attempt, given the
 * claim as the API server has it: only versions decide.
 */
class UnansweredDecisionTest {

  private static final AllocationResult ALLOC = FakeAllocator.result("node-a", "dev-0");

  /** The write was made on version 7 of claim {@code c}: version 8 on tells whether it landed. */
  private static final RecentWrites.Unanswered SENT_ON_7 =
      new RecentWrites.Unanswered("uid-c-c", K.NS, "c", ALLOC, 8, new Object());

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of(Named.of("the claim is gone", (ResourceClaim) null), "forget"),
        Arguments.of(
            Named.of(
                "one of the same name replaced it",
                at("7", b -> b.editMetadata().withUid("uid-other").endMetadata())),
            "forget"),
        Arguments.of(
            Named.of("still at the version written on: undo the attempt there", at("7", b -> b)),
            "unreserve on 7"),
        Arguments.of(
            Named.of(
                "the write landed: the informer will show it",
                at("8", b -> b.editOrNewStatus().withAllocation(ALLOC).endStatus())),
            "leave"),
        Arguments.of(
            Named.of("another writer moved it on: the informer will show it", at("9", b -> b)),
            "leave"),
        Arguments.of(
            Named.of(
                "allocated at the version written on (not on kube-apiserver)",
                at("7", b -> b.editOrNewStatus().withAllocation(ALLOC).endStatus())),
            "leave"),
        Arguments.of(
            Named.of(
                "no finalizer at the version written on (not on kube-apiserver)",
                at("7", b -> b.editMetadata().withFinalizers().endMetadata())),
            "leave"),
        Arguments.of(Named.of("a version that is no integer", at("abc", b -> b)), "leave"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void decides(ResourceClaim read, String expected) {
    assertThat(describe(UnansweredDecision.decide(SENT_ON_7, read))).isEqualTo(expected);
  }

  /** Never a write when the version sent on is not known (no integer). */
  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void anUnknownBasisIsLeftToTheClaimsDeletion(ResourceClaim read, String ignored) {
    var unknown = new RecentWrites.Unanswered("uid-c-c", K.NS, "c", ALLOC, Long.MAX_VALUE, "s");
    assertThat(describe(UnansweredDecision.decide(unknown, read))).isNotEqualTo("unreserve on 7");
  }

  /**
   * Claim {@code c} at {@code version}, unallocated with upstream's finalizer, then {@code edit}.
   */
  private static ResourceClaim at(String version, UnaryOperator<ResourceClaimBuilder> edit) {
    ResourceClaimBuilder b =
        K.claim("c")
            .editMetadata()
            .withResourceVersion(version)
            .addToFinalizers(Upstream.FINALIZER)
            .endMetadata();
    return edit.apply(b).build();
  }

  private static String describe(UnansweredDecision.Step step) {
    if (step instanceof UnansweredDecision.Forget) {
      return "forget";
    }
    if (step instanceof UnansweredDecision.Unreserve u) {
      return "unreserve on " + u.read().getMetadata().getResourceVersion();
    }
    return "leave";
  }
}
