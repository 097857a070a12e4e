package io.kdra.leadership;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Supplier;

/**
 * A replica's leadership as meters, the same in every service so that one alert covers all: {@code
 * kdra_leadership_leader{component}} (1 while this replica leads, 0 while it stands by) and {@code
 * kdra_leadership_acquired_total{component}} (how often it became the leader). Both exist from
 * start-up, at 0 until an election says otherwise.
 */
public final class LeadershipMeters {

  private LeadershipMeters() {}

  /**
   * Registers the meters of {@code component} over whatever {@code leadership} returns at scrape
   * time (null before the election is set up counts as standing by).
   */
  public static void register(
      MeterRegistry registry, String component, Supplier<Leadership> leadership) {
    Gauge.builder(
            "kdra.leadership.leader",
            leadership,
            s -> {
              Leadership l = s.get();
              return l != null && l.leading() ? 1 : 0;
            })
        .strongReference(true) // the supplier is often a lambda nothing else holds
        .tag("component", component)
        .description("1 while this replica leads (writes), 0 while it stands by")
        .register(registry);
    FunctionCounter.builder(
            "kdra.leadership.acquired",
            leadership,
            s -> {
              Leadership l = s.get();
              return l == null ? 0 : l.acquisitions();
            }) // weakly held, as every FunctionCounter: the gauge above holds the same supplier
        .tag("component", component)
        .description(
            "How often this replica became the leader; a rise across replicas means "
                + "the Lease keeps changing hands")
        .register(registry);
  }
}
