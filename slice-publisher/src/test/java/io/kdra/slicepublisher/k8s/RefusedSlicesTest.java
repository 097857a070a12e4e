package io.kdra.slicepublisher.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.validation.ValidationError;
import io.kdra.core.validation.ValidationError.ObjectRef;
import io.kdra.core.validation.ValidationError.Type;
import io.kdra.slicepublisher.domain.PoolKey;
import io.kdra.slicepublisher.domain.RefusedSlice;
import io.kdra.slicepublisher.observability.PublisherMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class RefusedSlicesTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final PublisherMetrics metrics = new PublisherMetrics(registry);
  private final RefusedSlices refused = new RefusedSlices(metrics);

  private static final PoolKey N1 = new PoolKey("gpu.kdra.io", "n1");
  private static final PoolKey N2 = new PoolKey("gpu.kdra.io", "n2");

  private static RefusedSlice slice(String name, String field) {
    return new RefusedSlice(name, List.of(error(name, field)));
  }

  private static ValidationError error(String name, String field) {
    return new ValidationError(
        new ObjectRef("ResourceSlice", "", name),
        field,
        Type.NOT_SUPPORTED,
        Optional.of("Sometimes"),
        "supported values: \"NoSchedule\"");
  }

  private double gauge() {
    return registry.get("kdra.publisher.invalid.slices").gauge().value();
  }

  @Test
  void eachProblemIsReportedOnceAndTheGaugeFollowsTheLatestPlans() {
    assertThat(refused.report(N1, List.of(slice("n1-0", "spec.devices[0].taints[0].effect"))))
        .containsExactly("n1-0");
    assertThat(refused.report(N2, List.of(slice("n2-0", "spec.devices[0].taints[0].effect"))))
        .containsExactly("n2-0");
    assertThat(gauge()).isEqualTo(2);
    // a resync plans the same again: nothing new to say
    assertThat(refused.report(N1, List.of(slice("n1-0", "spec.devices[0].taints[0].effect"))))
        .isEmpty();
    // a different problem in the same slice is news
    assertThat(refused.report(N1, List.of(slice("n1-0", "spec.devices[1].taints[0].effect"))))
        .containsExactly("n1-0");
    assertThat(refused.report(N1, List.of())).isEmpty();
    assertThat(gauge()).isEqualTo(1);
    assertThat(metrics.refusedSlices()).isEqualTo(1);
  }

  @Test
  void longListsAreCut() {
    var errors =
        IntStream.range(0, 7).mapToObj(i -> error("s", "spec.devices[" + i + "]")).toList();
    assertThat(RefusedSlices.describe(errors))
        .startsWith("spec.devices[0]: Unsupported value: \"Sometimes\": supported values:")
        .endsWith("; and 2 more")
        .contains("spec.devices[4]")
        .doesNotContain("spec.devices[5]");
  }
}
