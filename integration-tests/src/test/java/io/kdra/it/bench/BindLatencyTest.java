package io.kdra.it.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** p50, p90 and p99 of times to bind: nearest rank, whatever the order they come in. */
class BindLatencyTest {

  @ParameterizedTest(name = "1..{0}: {1} / {2} / {3}")
  @CsvSource({
    "1, 1, 1, 1",
    "2, 1, 2, 2",
    "10, 5, 9, 10",
    "35, 18, 32, 35",
    "100, 50, 90, 99",
    "1000, 500, 900, 990"
  })
  void percentilesAreNearestRank(int count, double p50, double p90, double p99) {
    List<Double> ms =
        new ArrayList<>(IntStream.rangeClosed(1, count).mapToObj(i -> (double) i).toList());
    Collections.shuffle(ms, new java.util.Random(count));

    BindLatency latency = BindLatency.of(ms);

    assertThat(latency.count()).isEqualTo(count);
    assertThat(latency.p50Ms()).isEqualTo(p50);
    assertThat(latency.p90Ms()).isEqualTo(p90);
    assertThat(latency.p99Ms()).isEqualTo(p99);
  }

  @Test
  void noneBoundHasNoPercentiles() {
    BindLatency latency = BindLatency.of(List.of());
    assertThat(latency.count()).isZero();
    assertThat(latency.p50Ms()).isNaN();
    assertThat(latency.p99Ms()).isNaN();
  }
}
