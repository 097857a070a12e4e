package io.kdra.slicepublisher.grpc;

import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.inventory.v1.ReportAck;
import io.kdra.slicepublisher.domain.InventoryStore;
import io.kdra.slicepublisher.domain.NodeInventory;
import io.kdra.slicepublisher.observability.PublisherMetrics;
import java.time.Clock;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * Accepts or refuses one snapshot whose node has already been checked: the driver must be served,
 * the sequence newer than the stream's last, and the content valid. Accepted snapshots replace the
 * driver's inventory for the node and trigger a reconcile. Thread-safe.
 *
 * <p>When a stream ends, its last snapshot is marked disconnected if it is still the current one
 * ({@link InventoryStore#streamEnded}); the planner taints its devices once {@code
 * PlannerSettings.disconnectedTaintAfter} has passed without a new stream, and the outcome it plans
 * says when that is due.
 *
 * <p>Sequences are compared within one stream only: a restarted driver opens a new stream and may
 * start counting again, and its first snapshot must win over its predecessor's last.
 */
public final class SnapshotIntake {

  private static final Logger LOG = Logger.getLogger(SnapshotIntake.class);
  private static final int MAX_REMEMBERED = 10_000;

  private final Set<String> drivers;
  private final SnapshotConverter converter;
  private final InventoryStore store;
  private final Consumer<NodeInventory> changed;
  private final PublisherMetrics metrics;
  private final Clock clock;

  /** driver/node pairs whose refusal over the device cap was logged; until they are accepted. */
  private final Set<String> overCap = ConcurrentHashMap.newKeySet();

  public SnapshotIntake(
      Set<String> drivers,
      SnapshotConverter converter,
      InventoryStore store,
      Consumer<NodeInventory> changed,
      PublisherMetrics metrics,
      Clock clock) {
    this.drivers = Set.copyOf(drivers);
    this.converter = converter;
    this.store = store;
    this.changed = changed;
    this.metrics = metrics;
    this.clock = clock;
    metrics.servedDrivers(this.drivers);
  }

  /**
   * @param lastSequence the sequence of the last snapshot accepted on this stream, or null
   * @return the acknowledgement to send
   */
  public ReportAck accept(InventorySnapshot s, Long lastSequence) {
    if (!drivers.contains(s.getDriver())) {
      metrics.snapshot("other", "refused");
      return refuse(
          s,
          "driver \""
              + s.getDriver()
              + "\" is not served by this publisher (serves "
              + drivers.stream().sorted().toList()
              + ")");
    }
    if (lastSequence != null && s.getSequence() <= lastSequence) {
      metrics.snapshot(s.getDriver(), "stale");
      return refuse(
          s,
          "sequence "
              + s.getSequence()
              + " is not newer than "
              + lastSequence
              + ", the last accepted on this stream");
    }
    SnapshotConverter.Result result = converter.convert(s, clock.instant());
    String pair = s.getDriver() + "/" + s.getNodeName();
    if (!result.ok()) {
      metrics.snapshot(s.getDriver(), "invalid");
      if (s.getDevicesCount() > converter.maxDevices()) {
        logOverCapOnce(pair, result.errors().get(0));
      }
      return refuse(s, String.join("; ", result.errors()));
    }
    overCap.remove(pair);
    if (store.put(result.inventory())) {
      changed.accept(result.inventory());
      metrics.snapshot(s.getDriver(), "accepted");
    } else {
      // an old driver pod still reporting while its replacement does: acknowledged (it is valid,
      // and the old pod is on its way out), not stored (InventoryStore#put)
      metrics.snapshot(s.getDriver(), "superseded");
      LOG.debugf(
          "snapshot %d of %s is superseded by a newer driver process's", s.getSequence(), pair);
    }
    return ReportAck.newBuilder().setSequence(s.getSequence()).setAccepted(true).build();
  }

  /**
   * The stream of {@code driver} on {@code node} ended after its snapshot {@code lastSequence} was
   * accepted: marks that snapshot disconnected, unless a newer stream has replaced it.
   *
   * @return whether it was marked
   */
  public boolean streamEnded(String driver, String node, long lastSequence) {
    Optional<NodeInventory> marked = store.streamEnded(driver, node, lastSequence, clock.instant());
    marked.ifPresent(changed);
    return marked.isPresent();
  }

  /** The driver retries with every change of its devices: one line per node says it all. */
  private void logOverCapOnce(String pair, String error) {
    if (overCap.size() >= MAX_REMEMBERED) {
      overCap.clear();
    }
    if (overCap.add(pair)) {
      LOG.warnf("refusing the snapshots of %s: %s (logged once per node)", pair, error);
    }
  }

  private static ReportAck refuse(InventorySnapshot s, String error) {
    return ReportAck.newBuilder()
        .setSequence(s.getSequence())
        .setAccepted(false)
        .setError(error)
        .build();
  }
}
