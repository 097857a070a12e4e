package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A reconcile applies a class only while its latest cached copy exists and is not being deleted.
 */
class StillWantedTest {

  static Stream<Arguments> cases() {
    ComputeClass live = computeClass("live", Priority.gpu("nvidia-l4", 1));
    ComputeClass deleting = computeClass("deleting", Priority.gpu("nvidia-l4", 1));
    deleting.getMetadata().setDeletionTimestamp("2026-12-07T18:00:00Z");
    return Stream.of(
        Arguments.of("live", Optional.of(live), true),
        Arguments.of("marked for deletion", Optional.of(deleting), false),
        Arguments.of("gone from the cache", Optional.empty(), false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void appliesOnlyALiveClass(String title, Optional<ComputeClass> latest, boolean wanted) {
    assertThat(ComputeClassReconciler.stillWanted(latest)).isEqualTo(wanted);
  }
}
