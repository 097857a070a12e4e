package io.kdra.core.alloc;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Feature gates that the API server has on but this allocator has off. kube-scheduler runs with the
 * cluster's gates; an allocator that has one of them off decides differently (a claim with {@code
 * derivedAttributes} fails here and is allocated there), so a service says so once at start-up. The
 * API server's gates come from its {@code kubernetes_feature_enabled} metric, which every API
 * server from 1.26 on publishes on {@code /metrics}.
 */
public final class GateSkew {

  private static final Pattern FEATURE =
      Pattern.compile("^kubernetes_feature_enabled\\{([^}]*)\\}\\s+(\\S+)");
  private static final Pattern NAME = Pattern.compile("(?:^|,)name=\"([^\"]*)\"");

  private GateSkew() {}

  /**
   * The gates of a Prometheus text exposition: name to enabled. Lines of other metrics, comments
   * and values that are no number are left out.
   */
  public static Map<String, Boolean> parseMetrics(String metrics) {
    Map<String, Boolean> gates = new TreeMap<>();
    for (String line : metrics.split("\n")) {
      Matcher m = FEATURE.matcher(line.strip());
      if (!m.find()) {
        continue;
      }
      Matcher name = NAME.matcher(m.group(1));
      if (!name.find()) {
        continue;
      }
      try {
        gates.put(name.group(1), Double.parseDouble(m.group(2)) != 0);
      } catch (NumberFormatException e) {
        // not a sample value: ignored
      }
    }
    return gates;
  }

  /** The gates of {@code known} that {@code server} has on and {@code enabled} lacks, sorted. */
  public static List<String> skewed(
      Map<String, Boolean> server, List<String> known, List<String> enabled) {
    return known.stream()
        .filter(g -> Boolean.TRUE.equals(server.get(g)) && !enabled.contains(g))
        .sorted()
        .toList();
  }

  /**
   * The one warning for the gates of {@link AllocatorFeatures#GATES} that {@code server} has on and
   * {@code ours} has off, sorted; empty when there are none.
   */
  public static Optional<String> warning(Map<String, Boolean> server, AllocatorFeatures ours) {
    List<String> skewed = skewed(server, AllocatorFeatures.GATES, ours.enabledNames());
    if (skewed.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        "feature gates on in the API server but off in this service's allocator: "
            + String.join(", ", skewed)
            + " (set them as kube-scheduler has them)");
  }
}
