package io.kdra.computeclassbridge.observability;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The bridge's Micrometer meters, served at {@code /q/metrics} in Prometheus format, all present
 * from start-up:
 *
 * <ul>
 *   <li>{@code kdra_bridge_reconciles_total{outcome}}: reconciles of a ComputeClass that changed
 *       generated objects ({@code applied}), changed nothing ({@code unchanged}), met a concurrent
 *       write and will apply again ({@code conflict}; a routine race), failed ({@code failed}), or
 *       were left to the leader by a replica that does not lead ({@code standby}: it wrote nothing,
 *       and reconciles every ComputeClass once it leads);
 *   <li>{@code kdra_bridge_computeclasses}: ComputeClasses the bridge knows;
 *   <li>{@code kdra_bridge_degraded_computeclasses}: of those, the ones whose status says that an
 *       accelerator could not be mapped or an object not applied.
 * </ul>
 */
@ApplicationScoped
public class BridgeMetrics {

  /** What one reconcile did. */
  public enum Outcome {
    APPLIED,
    UNCHANGED,
    CONFLICT,
    FAILED,
    STANDBY
  }

  private final MeterRegistry registry;
  private final Map<Outcome, Counter> reconciles = new EnumMap<>(Outcome.class);

  @Inject
  public BridgeMetrics(MeterRegistry registry) {
    this.registry = registry;
    for (Outcome o : Outcome.values()) {
      reconciles.put(
          o,
          Counter.builder("kdra.bridge.reconciles")
              .description("Reconciles of a ComputeClass, by outcome")
              .tag("outcome", o.name().toLowerCase())
              .register(registry));
    }
  }

  /** Counts one reconcile. */
  public void reconciled(Outcome outcome) {
    reconciles.get(outcome).increment();
  }

  /**
   * Registers the two ComputeClass gauges, read on each scrape; held strongly (Micrometer's default
   * weak reference would let the collector take the suppliers).
   */
  public void computeClasses(Supplier<Long> all, Supplier<Long> degraded) {
    Gauge.builder("kdra.bridge.computeclasses", all, s -> s.get())
        .description("ComputeClasses the bridge maps")
        .strongReference(true)
        .register(registry);
    Gauge.builder("kdra.bridge.degraded.computeclasses", degraded, s -> s.get())
        .description("ComputeClasses whose status is Degraded")
        .strongReference(true)
        .register(registry);
  }
}
