package io.kdra.slicepublisher.observability;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The publisher's Micrometer meters (Prometheus names in docs/user/slice-publisher.md): slices
 * written by operation, write conflicts and failures, slices held back as invalid, reconcile
 * latency per pool, snapshots received by outcome. Thread-safe.
 */
@Singleton
public class PublisherMetrics {

  private final MeterRegistry registry;
  private final Counter created;
  private final Counter updated;
  private final Counter deleted;
  private final Counter conflicts;
  private final Counter failures;
  private final Counter droppedFields;
  private final Timer reconcile;
  private final AtomicInteger refusedSlices = new AtomicInteger();

  @Inject
  public PublisherMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.created = writes("create");
    this.updated = writes("update");
    this.deleted = writes("delete");
    this.conflicts =
        Counter.builder("kdra.publisher.write.conflicts")
            .description("Writes refused because the slice changed since it was read")
            .register(registry);
    this.failures =
        Counter.builder("kdra.publisher.write.failures")
            .description("Writes that failed for another reason")
            .register(registry);
    this.droppedFields =
        Counter.builder("kdra.publisher.dropped.fields")
            .description("Slices the API server stored differently from how they were sent")
            .register(registry);
    Gauge.builder("kdra.publisher.invalid.slices", refusedSlices, AtomicInteger::get)
        .description("Planned slices not written because the API server would refuse them")
        .register(registry);
    this.reconcile =
        Timer.builder("kdra.publisher.reconcile")
            .description("Time to reconcile one pool, writes included")
            .register(registry);
  }

  private Counter writes(String op) {
    return Counter.builder("kdra.publisher.slices")
        .tag("operation", op)
        .description("ResourceSlices written")
        .register(registry);
  }

  public void created() {
    created.increment();
  }

  public void updated() {
    updated.increment();
  }

  public void deleted() {
    deleted.increment();
  }

  public void conflict() {
    conflicts.increment();
  }

  public void failure() {
    failures.increment();
  }

  public void droppedFields() {
    droppedFields.increment();
  }

  /** How many planned slices are held back as invalid now. */
  public void refusedSlices(int count) {
    refusedSlices.set(count);
  }

  /** The value of {@link #refusedSlices(int)}, for tests. */
  public int refusedSlices() {
    return refusedSlices.get();
  }

  public Timer reconcileTimer() {
    return reconcile;
  }

  /**
   * Counts one driver stream refused before any snapshot was looked at: {@code code}
   * UNAUTHENTICATED (no token, or not the driver's ServiceAccount, audience or pod) or
   * PERMISSION_DENIED (a report for another node than the driver pod's).
   */
  public void refusedStream(String code) {
    refusedStreams(code).increment();
  }

  /**
   * Registers the snapshot counters of every served driver (accepted, invalid, stale, superseded)
   * and of refused ones (driver {@code other}) at zero, so that each series exists from start-up.
   */
  public void servedDrivers(Collection<String> drivers) {
    for (String driver : drivers) {
      for (String outcome : List.of("accepted", "invalid", "stale", "superseded")) {
        inventories(driver, outcome);
      }
    }
    inventories("other", "refused");
    for (String code : List.of("UNAUTHENTICATED", "PERMISSION_DENIED")) {
      refusedStreams(code);
    }
  }

  /**
   * Counts one snapshot; {@code outcome} is accepted, invalid, refused, stale or superseded (an old
   * driver pod's, while its replacement on the node reports).
   */
  public void snapshot(String driver, String outcome) {
    inventories(driver, outcome).increment();
  }

  private Counter inventories(String driver, String outcome) {
    return Counter.builder("kdra.publisher.inventories")
        .tags("driver", driver, "outcome", outcome)
        .description(
            "Driver snapshots received, by driver and outcome (accepted, invalid, "
                + "stale, refused, superseded)")
        .register(registry);
  }

  private Counter refusedStreams(String code) {
    return Counter.builder("kdra.publisher.refused.streams")
        .tag("code", code)
        .description(
            "Driver streams refused before any snapshot: a token that is not the "
                + "driver's, or a report for another node")
        .register(registry);
  }
}
