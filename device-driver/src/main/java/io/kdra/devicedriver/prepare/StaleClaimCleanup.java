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
import java.util.Set;
import java.util.TreeSet;
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
 *
 * <p>Entries rebuilt from their CDI specs after a damaged checkpoint have no name (specs of every
 * driver version hold the UID alone): a pass that has such entries lists all claims once to find
 * them by UID ({@link ClaimReader#findByUid}). A claim found there is read by the name it had from
 * then on (kept in memory: a restart lists once again); one not found is gone.
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
  private final Map<String, ClaimRef> foundNames = new HashMap<>(); // by UID; confined to the pass

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
    Map<String, PreparedClaim> prepared = driver.prepared();
    foundNames.keySet().retainAll(prepared.keySet());
    Map<String, StaleClaims.Observation> observed = new HashMap<>();
    Set<String> unnamed = new TreeSet<>();
    for (PreparedClaim entry : prepared.values()) {
      Optional<ClaimRef> named = named(entry);
      if (named.isPresent()) {
        observed.put(entry.claim().uid(), observe(named.get()));
      } else {
        unnamed.add(entry.claim().uid());
      }
    }
    observed.putAll(observeByUid(unnamed));
    StaleClaims.Decision d = StaleClaims.decide(observed, goneSince, clock.instant(), grace);
    goneSince = d.goneSince();
    d.unprepare()
        .forEach(
            (uid, why) -> {
              PreparedClaim entry = driver.prepared().get(uid);
              if (entry == null) {
                return; // the kubelet unprepared it meanwhile
              }
              ClaimRef ref = named(entry).orElse(entry.claim());
              String error = driver.unprepareResourceClaims(List.of(ref)).getOrDefault(uid, "");
              if (error.isEmpty()) {
                LOG.warnf("unprepared claim %s, which the kubelet never unprepared: %s", ref, why);
              } else {
                LOG.errorf("unpreparing stale claim %s (%s) failed: %s", ref, why, error);
              }
            });
    return d.unprepare();
  }

  /** The entry's claim as the API names it, if known: a rebuilt entry's once it was found. */
  private Optional<ClaimRef> named(PreparedClaim entry) {
    return entry.recovered()
        ? Optional.ofNullable(foundNames.get(entry.claim().uid()))
        : Optional.of(entry.claim());
  }

  private StaleClaims.Observation observe(ClaimRef ref) {
    try {
      Optional<ResourceClaim> claim = reader.read(ref.namespace(), ref.name());
      return StaleClaims.observe(ref.uid(), claim, driverName, pool);
    } catch (ClaimReader.ClaimReadException e) {
      return StaleClaims.unreadable(e.getMessage());
    }
  }

  /** Looks the unnamed entries up in one list of all claims, and keeps the names found. */
  private Map<String, StaleClaims.Observation> observeByUid(Set<String> uids) {
    if (uids.isEmpty()) {
      return Map.of();
    }
    Map<String, ResourceClaim> found;
    try {
      found = reader.findByUid(uids);
    } catch (ClaimReader.ClaimReadException e) {
      // visible: without list on resourceclaims (RBAC) these entries stay until the kubelet's
      // unprepare
      LOG.warnf(
          "cannot find claims %s, rebuilt from their CDI specs, by UID: %s", uids, e.getMessage());
      StaleClaims.Observation unreadable = StaleClaims.unreadable(e.getMessage());
      Map<String, StaleClaims.Observation> all = new HashMap<>();
      uids.forEach(uid -> all.put(uid, unreadable));
      return all;
    }
    Map<String, StaleClaims.Observation> observed = new HashMap<>();
    for (String uid : uids) {
      ResourceClaim claim = found.get(uid);
      if (claim != null) {
        foundNames.put(
            uid,
            new ClaimRef(claim.getMetadata().getNamespace(), uid, claim.getMetadata().getName()));
      }
      observed.put(
          uid, StaleClaims.observeByUid(uid, Optional.ofNullable(claim), driverName, pool));
    }
    return observed;
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
