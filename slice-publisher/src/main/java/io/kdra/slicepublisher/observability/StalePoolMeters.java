package io.kdra.slicepublisher.observability;

import io.kdra.slicepublisher.domain.InventoryStore;
import io.kdra.slicepublisher.domain.SlicePlanner;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Clock;
import java.util.List;

/**
 * {@code kdra_publisher_stale_pools{reason}}: pools whose devices carry the stale taint now,
 * because their driver's stream ended ({@code disconnected}) or it went silent ({@code silent}).
 * Computed at scrape time by the planner's own rule over the inventories, so it cannot disagree
 * with the taints written. Only the leader receives inventories: a standby reports 0.
 */
@ApplicationScoped
public class StalePoolMeters {

  void register(
      @Observes StartupEvent event,
      MeterRegistry registry,
      InventoryStore store,
      SlicePlanner planner,
      Clock clock) {
    for (String reason :
        List.of(SlicePlanner.DISCONNECTED, SlicePlanner.SILENT, SlicePlanner.DISCOVERY_STALE)) {
      Gauge.builder(
              "kdra.publisher.stale.pools",
              () -> planner.stalePools(store.all(), clock.instant()).get(reason))
          .strongReference(true)
          .tag("reason", reason)
          .description("Pools whose devices are tainted because their driver stopped reporting")
          .register(registry);
    }
  }
}
