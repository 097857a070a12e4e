package io.kdra.computeclassbridge.leadership;

import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import org.jboss.logging.Logger;

/**
 * This replica's part in the leader election: whether it leads, who does, and what happens when
 * it stops leading. quarkus-operator-sdk runs the election and starts reconciling on the leader
 * only; this class adds what it lacks: a graceful hand-over (a replica that shuts down releases
 * the Lease, so a standby takes over within one retry period instead of one lease duration) and
 * an orderly exit when leadership is lost any other way (a replica that may no longer lead must
 * stop writing at once; a restart also drops every in-memory state).
 *
 * <p>Thread-safe: the callbacks run on the election's threads, the rest on any.
 */
public final class Leadership {
  private static final Logger LOG = Logger.getLogger(Leadership.class);

  private final boolean elected;
  private final String identity;
  private final Runnable release;
  private final Runnable exit;
  private volatile boolean leading;
  private volatile boolean stopping;
  private volatile String leader;

  private Leadership(boolean elected, String identity, Runnable release, Runnable exit) {
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
   * @param release gives the Lease up (called on shutdown while leading, after reconciling ended)
   * @param exit ends the process (called when leadership is lost while running)
   */
  public static Leadership elected(String identity, Runnable release, Runnable exit) {
    return new Leadership(true, identity, release, exit);
  }

  /** The only replica (leader election off): always leads. */
  public static Leadership single(String identity) {
    return new Leadership(false, identity, () -> {}, () -> {});
  }

  /** Callbacks for the election; quarkus-operator-sdk calls them besides its own. */
  public LeaderCallbacks callbacks() {
    return new LeaderCallbacks(this::startedLeading, this::stoppedLeading, this::newLeader);
  }

  void startedLeading() {
    leading = true;
    LOG.infof("%s leads: reconciling ComputeClasses", identity);
  }

  void stoppedLeading() {
    leading = false;
    if (stopping) {
      LOG.infof("%s stops leading on shutdown: releasing the Lease for a standby", identity);
      release.run();
    } else {
      LOG.errorf("%s lost the Lease: exiting so that only the leader writes", identity);
      exit.run();
    }
  }

  void newLeader(String id) {
    leader = id;
    if (id != null && !id.equals(identity)) {
      LOG.infof("computeclass-bridge leader is %s; %s stands by", id, identity);
    }
  }

  /**
   * The process is shutting down: the leadership that ends next is handed over, not lost. Must
   * be called before the operator stops (the election's end is part of that stop).
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

  /** Whether this replica reconciles now. */
  public boolean leading() {
    return leading;
  }

  /** The identity in the Lease as last seen, or null before the first look. */
  public String leader() {
    return leader;
  }
}
