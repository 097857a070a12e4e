package io.kdra.devicedriver.prepare;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.devicedriver.plugin.ClaimRef;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The periodic checkpoint-to-API reconcile: reads each checkpointed claim by name, asks {@link
 * StaleClaims} which are gone for longer than the grace period, and unprepares those through the
 * driver, exactly as the kubelet's unprepare would (CDI spec, device setup, checkpoint entry). Each
 * pass also settles setup intents a previous process left ({@link
 * DeviceDriver#settleSetupIntents}), for devices discovery had not found at start. One GET per
 * checkpointed claim per pass.
 */
public final class StaleClaimCleanup implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(StaleClaimCleanup.class);

  private final DeviceDriver driver;
  private final ClaimReader reader;
  private final String driverName;
  private final String pool;
  private final Duration grace;
  private final Clock clock;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "stale-claims");
            t.setDaemon(true);
            return t;
          });
  private Map<String, Instant> goneSince = Map.of(); // confined to the pass

  public StaleClaimCleanup(
      DeviceDriver driver,
      ClaimReader reader,
      String driverName,
      String pool,
      Duration grace,
      Clock clock) {
    this.driver = driver;
    this.reader = reader;
    this.driverName = driverName;
    this.pool = pool;
    this.grace = grace;
    this.clock = clock;
  }

  /** Runs a pass every {@code interval}, the first one after a full interval. */
  public void start(Duration interval) {
    long ms = Math.max(1000, interval.toMillis());
    timer.scheduleWithFixedDelay(this::safePass, ms, ms, TimeUnit.MILLISECONDS);
  }

  private void safePass() {
    try {
      pass();
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable e) {
      // the task must outlive any failure: scheduleWithFixedDelay ends it at the first throw
      LOG.errorf(e, "stale claim check failed");
    }
  }

  /**
   * One pass.
   *
   * @return the UIDs unprepared, with the reason
   */
  public synchronized Map<String, String> pass() {
    driver.settleSetupIntents();
    Map<String, StaleClaims.Observation> observed = new HashMap<>();
    for (PreparedClaim entry : driver.prepared().values()) {
      observed.put(entry.claim().uid(), observe(entry));
    }
    StaleClaims.Decision d = StaleClaims.decide(observed, goneSince, clock.instant(), grace);
    goneSince = d.goneSince();
    d.unprepare()
        .forEach(
            (uid, why) -> {
              PreparedClaim entry = driver.prepared().get(uid);
              if (entry == null) {
                return; // the kubelet unprepared it meanwhile
              }
              ClaimRef ref = entry.claim();
              String error = driver.unprepareResourceClaims(List.of(ref)).getOrDefault(uid, "");
              if (error.isEmpty()) {
                LOG.warnf("unprepared claim %s, which the kubelet never unprepared: %s", ref, why);
              } else {
                LOG.errorf("unpreparing stale claim %s (%s) failed: %s", ref, why, error);
              }
            });
    return d.unprepare();
  }

  private StaleClaims.Observation observe(PreparedClaim entry) {
    if (entry.recovered()) {
      return StaleClaims.observe(entry, Optional.empty(), driverName, pool);
    }
    try {
      Optional<ResourceClaim> claim = reader.read(entry.claim().namespace(), entry.claim().name());
      return StaleClaims.observe(entry, claim, driverName, pool);
    } catch (ClaimReader.ClaimReadException e) {
      return StaleClaims.unreadable(e.getMessage());
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
