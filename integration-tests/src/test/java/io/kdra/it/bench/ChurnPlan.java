package io.kdra.it.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.stream.IntStream;

/**
 * The {@link BenchWorkload#CHURN} workload's pods, planned before the run: the fill (90% of the
 * GPUs its pods can take, as ClusterLoader2's DRA test fills a cluster), then waves that each
 * delete 10% of the pods, chosen at random among those that exist, and create as many new ones.
 * Pods are numbered: the fill's are {@code 0 .. fillPods-1}, each wave's new ones take the next
 * numbers, so no name is used twice in a run. The same seed gives the same plan, so both sides of a
 * round replace the same pods.
 *
 * @param fillPods the pods created first, and the pods that exist after every wave
 * @param waves the waves, in order
 */
record ChurnPlan(int fillPods, List<Wave> waves) {

  static final int FILL_PERCENT = 90;
  static final int WAVE_PERCENT = 10;

  /**
   * One wave.
   *
   * @param deleted the numbers of the pods it deletes, ascending
   * @param created the numbers of the pods it creates, as many
   */
  record Wave(List<Integer> deleted, List<Integer> created) {}

  /** 90% (rounded down, at least one) of the GPUs a churn pod can take on {@code nodes} nodes. */
  static int fillPods(int nodes) {
    return Math.max(1, nodes * BenchWorkload.GPUS_OF_40GI_PER_NODE * FILL_PERCENT / 100);
  }

  /** 10% of {@code fillPods}, rounded half up, at least one. */
  static int waveSize(int fillPods) {
    return Math.max(1, (fillPods * WAVE_PERCENT + 50) / 100);
  }

  static ChurnPlan of(int fillPods, int waves, long seed) {
    Random random = new Random(seed);
    // the numbers of the pods that exist, in a stable order so that a seed picks the same ones
    List<Integer> live = new ArrayList<>(IntStream.range(0, fillPods).boxed().toList());
    int size = waveSize(fillPods);
    int next = fillPods;
    List<Wave> planned = new ArrayList<>();
    for (int w = 0; w < waves; w++) {
      TreeSet<Integer> deleted = new TreeSet<>();
      for (int i = 0; i < size; i++) {
        deleted.add(live.remove(random.nextInt(live.size())));
      }
      List<Integer> created = IntStream.range(next, next + size).boxed().toList();
      next += size;
      live.addAll(created);
      planned.add(new Wave(List.copyOf(deleted), created));
    }
    return new ChurnPlan(fillPods, List.copyOf(planned));
  }

  /** The pods all waves create together. */
  int wavePods() {
    return waves.stream().mapToInt(w -> w.created().size()).sum();
  }

  /** The numbers of the pods that exist after the last wave, ascending. */
  List<Integer> live() {
    TreeSet<Integer> live = new TreeSet<>(IntStream.range(0, fillPods).boxed().toList());
    for (Wave w : waves) {
      live.removeAll(w.deleted());
      live.addAll(w.created());
    }
    return List.copyOf(live);
  }
}
