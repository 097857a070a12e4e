package io.kdra.leadership;

import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * A replica's part in a Lease-based leader election: whether it leads, who does, and what happens
 * when it stops leading. The election itself runs elsewhere (quarkus-operator-sdk's for the
 * operators, fabric8's {@code LeaderElector} for the slice-publisher); this class adds what both
 * lack: a graceful hand-over (a replica that shuts down releases the Lease, so a standby takes over
 * within one retry period instead of one lease duration) and an orderly exit when leadership is
 * lost any other way (a replica that may no longer lead must stop writing at once; a restart also
 * drops every in-memory state).
 *
 * <p>Thread-safe: the callbacks run on the election's threads, the rest on any.
 */
public final class Leadership {
  private static final Logger LOG = Logger.getLogger(Leadership.class);

  private final String component;
  private final boolean elected;
  private final String identity;
  private final Runnable release;
  private final Runnable exit;
  private volatile boolean leading;
  private volatile boolean stopping;
  private volatile String leader;
  private final AtomicLong acquisitions = new AtomicLong();

  private Leadership(
      String component, boolean elected, String identity, Runnable release, Runnable exit) {
    this.component = component;
    this.elected = elected;
    this.identity = identity;
    this.release = release;
    this.exit = exit;
    this.leading = !elected;
    this.leader = elected ? null : identity;
  }

  /**
   * A replica among others.
   *
   * @param component the service's name, for logs
   * @param release gives the Lease up (called on shutdown while leading, after writing ended)
   * @param exit ends the process (called when leadership is lost while running)
   */
  public static Leadership elected(
      String component, String identity, Runnable release, Runnable exit) {
    return new Leadership(component, true, identity, release, exit);
  }

  /** The only replica (leader election off): always leads. */
  public static Leadership single(String component, String identity) {
    return new Leadership(component, false, identity, () -> {}, () -> {});
  }

  /**
   * The configured identity, else the pod name ({@code HOSTNAME}), else a random one: two replicas
   * must never share one, or both would lead.
   */
  public static String identity(Optional<String> configured, String hostname, String component) {
    return configured
        .filter(s -> !s.isBlank())
        .orElseGet(
            () ->
                hostname != null && !hostname.isBlank()
                    ? hostname
                    : component + "-" + UUID.randomUUID());
  }

  /** Callbacks for the election. */
  public LeaderCallbacks callbacks() {
    return callbacks(() -> {});
  }

  /** Callbacks for the election; {@code whenLeading} starts the writing once elected. */
  public LeaderCallbacks callbacks(Runnable whenLeading) {
    return new LeaderCallbacks(
        () -> {
          startedLeading();
          whenLeading.run();
        },
        this::stoppedLeading,
        this::newLeader);
  }

  void startedLeading() {
    leading = true;
    acquisitions.incrementAndGet();
    LOG.infof("%s leads the %s", identity, component);
  }

  void stoppedLeading() {
    leading = false;
    if (stopping) {
      // the release itself checks that this replica still holds the Lease
      LOG.infof("%s stops leading on shutdown: releasing the Lease for a standby", identity);
      release.run();
    } else {
      LOG.errorf(
          "%s lost the %s Lease: exiting so that only the leader writes", identity, component);
      exit.run();
    }
  }

  void newLeader(String id) {
    leader = id;
    if (id != null && !id.equals(identity)) {
      LOG.infof("%s leader is %s; %s stands by", component, id, identity);
    }
  }

  /**
   * The process is shutting down: the leadership that ends next is handed over, not lost. Call it
   * before the election stops (stopping it ends the leadership), and stop writing before that.
   */
  public void shuttingDown() {
    stopping = true;
  }

  /** Whether leader election runs at all (false: a single replica that always leads). */
  public boolean elected() {
    return elected;
  }

  public String identity() {
    return identity;
  }

  /** Whether this replica leads now. */
  public boolean leading() {
    return leading;
  }

  /**
   * How often this replica has become the leader since it started (0 for a single replica, which
   * leads without an election). A replica that loses the Lease exits, so across restarts a rising
   * count means the Lease keeps changing hands.
   */
  public long acquisitions() {
    return acquisitions.get();
  }

  public String component() {
    return component;
  }

  /** The identity in the Lease as last seen, or null before the first look. */
  public String leader() {
    return leader;
  }
}
