package io.kdra.claimcontroller.observability;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.function.Supplier;

/**
 * The controller's Micrometer meters, served at {@code /q/metrics} in Prometheus format:
 *
 * <ul>
 *   <li>{@code kdra_claim_controller_scheduling_seconds}: histogram of one scheduling attempt
 *       (claims, node filter, allocation, writes, binding);
 *   <li>{@code kdra_claim_controller_pending_pods}: pods of this scheduler not bound yet;
 *   <li>{@code kdra_claim_controller_allocation_failures_total{reason}}: attempts that placed
 *       nothing, by the allocator's or filter's short reason;
 *   <li>{@code kdra_claim_controller_scheduling_retries_total}: attempts retried because a claim or
 *       volume changed under the decision (a pod stuck in retries is also logged at INFO);
 *   <li>{@code kdra_claim_controller_unanswered_allocations_total{outcome}}: allocations whose
 *       write ended without an answer and that no pod attempt sent again, by what the settle did
 *       ({@code unreserved}, {@code conflict}, {@code forgotten}, {@code left}, {@code failed}).
 * </ul>
 */
@ApplicationScoped
public class SchedulingMetrics {

  private final MeterRegistry registry;
  private final Timer scheduling;

  @Inject
  public SchedulingMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.scheduling =
        Timer.builder("kdra.claim.controller.scheduling")
            .description("Duration of one scheduling attempt for a pod")
            .publishPercentileHistogram()
            .register(registry);
  }

  /** Times {@code attempt}. */
  public <T> T timeScheduling(Supplier<T> attempt) {
    return scheduling.record(attempt);
  }

  /** Counts one failed attempt. */
  public void failure(String reason) {
    Counter.builder("kdra.claim.controller.allocation.failures")
        .description("Scheduling attempts that placed nothing")
        .tag("reason", reason)
        .register(registry)
        .increment();
  }

  /** Counts one attempt retried because a claim or volume changed under its decision. */
  public void retry() {
    Counter.builder("kdra.claim.controller.scheduling.retries")
        .description("Scheduling attempts retried because a claim or volume changed meanwhile")
        .register(registry)
        .increment();
  }

  /** Counts what the settle did with one allocation sent without an answer. */
  public void unansweredAllocation(String outcome) {
    Counter.builder("kdra.claim.controller.unanswered.allocations")
        .description(
            "Allocations whose write ended without an answer, settled without a pod attempt")
        .tag("outcome", outcome)
        .register(registry)
        .increment();
  }

  /**
   * Registers the pending-pods gauge, read from {@code count} on each scrape. The gauge holds
   * {@code count} strongly: Micrometer's default weak reference let the collector take the lambda,
   * after which the gauge read NaN and vanished from the scrape.
   */
  public void pendingPods(Supplier<Integer> count) {
    Gauge.builder("kdra.claim.controller.pending.pods", count, c -> c.get())
        .description("Pods of this scheduler that are not bound yet")
        .strongReference(true)
        .register(registry);
  }
}
