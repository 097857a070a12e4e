package io.kdra.slicepublisher.k8s;

import io.kdra.core.validation.ValidationError;
import io.kdra.slicepublisher.domain.PoolKey;
import io.kdra.slicepublisher.domain.RefusedSlice;
import io.kdra.slicepublisher.observability.PublisherMetrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;

/**
 * Reports the planned slices held back because the API server would refuse them: at ERROR once per
 * slice and set of problems (every resync plans them again), at INFO when a slice is no longer held
 * back, and as a gauge of how many are. Called from the reconciler's one worker thread.
 */
final class RefusedSlices {

  private static final Logger LOG = Logger.getLogger(RefusedSlices.class);

  /** A bad setting can make every device of a slice wrong: the first few say enough. */
  private static final int ERRORS_SHOWN = 5;

  private final PublisherMetrics metrics;
  private final Map<PoolKey, Map<String, List<ValidationError>>> byPool = new HashMap<>();

  RefusedSlices(PublisherMetrics metrics) {
    this.metrics = metrics;
  }

  /**
   * The refusals of the latest plan of {@code pool}, replacing the previous ones.
   *
   * @return the slices reported at ERROR now (new, or with other problems than before)
   */
  List<String> report(PoolKey pool, List<RefusedSlice> refused) {
    Map<String, List<ValidationError>> before = byPool.getOrDefault(pool, Map.of());
    if (refused.isEmpty() && before.isEmpty()) {
      return List.of();
    }
    Map<String, List<ValidationError>> now = new LinkedHashMap<>();
    List<String> reported = new ArrayList<>();
    for (RefusedSlice r : refused) {
      now.put(r.name(), r.errors());
      if (!r.errors().equals(before.get(r.name()))) {
        reported.add(r.name());
        LOG.errorf(
            "not writing ResourceSlice %s of pool %s: the API server would refuse it: %s",
            r.name(), pool, describe(r.errors()));
      }
    }
    before.keySet().stream()
        .filter(name -> !now.containsKey(name))
        .forEach(
            name -> LOG.infof("ResourceSlice %s of pool %s is no longer held back", name, pool));
    if (now.isEmpty()) {
      byPool.remove(pool);
    } else {
      byPool.put(pool, now);
    }
    metrics.refusedSlices(byPool.values().stream().mapToInt(Map::size).sum());
    return reported;
  }

  static String describe(List<ValidationError> errors) {
    String shown =
        errors.stream()
            .limit(ERRORS_SHOWN)
            .map(e -> e.field() + ": " + e.message())
            .collect(Collectors.joining("; "));
    return errors.size() <= ERRORS_SHOWN
        ? shown
        : shown + "; and " + (errors.size() - ERRORS_SHOWN) + " more";
  }
}
