package io.kdra.it.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The churn workload's plan: the fill, the waves' sizes and which pods each wave replaces. */
class ChurnPlanTest {

  @ParameterizedTest(name = "{0} nodes fill {1} pods")
  @CsvSource({"1, 3", "20, 72", "50, 180", "100, 360", "1000, 3600"})
  void theFillIsNinetyPercentOfTheGpusAChurnPodCanTake(int nodes, int fill) {
    // four GPUs of a node have 40Gi or more: single's request takes those only
    assertThat(ChurnPlan.fillPods(nodes)).isEqualTo(fill);
  }

  @ParameterizedTest(name = "{0} pods: waves of {1}")
  @CsvSource({"3, 1", "9, 1", "14, 1", "15, 2", "72, 7", "75, 8", "360, 36", "3600, 360"})
  void aWaveReplacesTenPercentOfThePodsRoundedAndAtLeastOne(int fill, int wave) {
    assertThat(ChurnPlan.waveSize(fill)).isEqualTo(wave);
  }

  @ParameterizedTest(name = "{0} pods, {1} waves, seed {2}")
  @CsvSource({"72, 5, 1", "72, 1, 2", "3, 5, 1", "360, 10, 7", "10, 0, 1"})
  void eachWaveDeletesLivePodsAndCreatesAsManyNewOnes(int fill, int waves, long seed) {
    ChurnPlan plan = ChurnPlan.of(fill, waves, seed);

    assertThat(plan.waves()).hasSize(waves);
    Set<Integer> live =
        IntStream.range(0, fill).boxed().collect(Collectors.toCollection(TreeSet::new));
    int next = fill;
    for (ChurnPlan.Wave wave : plan.waves()) {
      int size = ChurnPlan.waveSize(fill);
      assertThat(wave.deleted()).hasSize(size).doesNotHaveDuplicates();
      assertThat(live).containsAll(wave.deleted());
      // new pods take the next indices: no name is used twice in a run
      assertThat(wave.created())
          .containsExactlyElementsOf(IntStream.range(next, next + size).boxed().toList());
      live.removeAll(wave.deleted());
      live.addAll(wave.created());
      next += size;
      assertThat(live).hasSize(fill);
    }
    assertThat(plan.wavePods()).isEqualTo(waves * ChurnPlan.waveSize(fill));
    assertThat(plan.live()).containsExactlyElementsOf(live);
  }

  @ParameterizedTest(name = "seed {0}")
  @CsvSource({"1", "2", "43"})
  void theSameSeedPlansTheSameWavesSoBothSidesDeleteTheSamePods(long seed) {
    assertThat(ChurnPlan.of(360, 5, seed)).isEqualTo(ChurnPlan.of(360, 5, seed));
    assertThat(ChurnPlan.of(360, 5, seed).waves())
        .isNotEqualTo(ChurnPlan.of(360, 5, seed + 1).waves());
  }

  @ParameterizedTest(name = "{0} pods")
  @CsvSource({"72", "360"})
  void laterWavesMayReplacePodsOfEarlierWaves(int fill) {
    // the choice is among the pods that exist, the fill's and the earlier waves' alike
    Set<Integer> deletedFromWaves = new HashSet<>();
    ChurnPlan plan = ChurnPlan.of(fill, 40, 1);
    List<ChurnPlan.Wave> waves = plan.waves();
    for (ChurnPlan.Wave wave : waves) {
      wave.deleted().stream().filter(i -> i >= fill).forEach(deletedFromWaves::add);
    }
    assertThat(deletedFromWaves).isNotEmpty();
  }
}
