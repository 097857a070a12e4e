package io.kdra.leadership;

import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * A replica's part in a Lease-based leader election: whether it leads, who does, and what happens
 * when it stops leading. The election itself is fabric8's {@code LeaderElector} on {@link
 * ToleratingLeaseLock}, run by {@link ElectionWiring} in every elected service; this class adds
 * what the elector lacks: a graceful hand-over (a replica that shuts down releases the Lease, so a
 * standby takes over within one retry period instead of one lease duration) and a step-down in the
 * process when leadership is lost any other way (renewals that failed past the renew deadline, as
 * in an API-server outage, or another holder): the replica stops its leader-only work at once and
 * campaigns again, instead of exiting, so that an outage does not end in every replica's crash-loop
 * back-off.
 *
 * <p>Thread-safe: the callbacks run on the election's threads, the rest on any.
 */
public final class Leadership {
  private static final Logger LOG = Logger.getLogger(Leadership.class);

  private final String component;
  private final boolean elected;
  private final String identity;
  private final Runnable release;
  private final Runnable stepDown;
  private volatile boolean leading;
  private volatile boolean stopping;
  private volatile String leader;
  private final AtomicLong acquisitions = new AtomicLong();
  private final List<Runnable> whenLeading = new CopyOnWriteArrayList<>();

  private Leadership(
      String component, boolean elected, String identity, Runnable release, Runnable stepDown) {
    this.component = component;
    this.elected = elected;
    this.identity = identity;
    this.release = release;
    this.stepDown = stepDown;
    this.leading = !elected;
    this.leader = elected ? null : identity;
  }

  /**
   * A replica among others.
   *
   * @param component the service's name, for logs
   * @param release gives the Lease up (called on shutdown while leading, after writing ended)
   * @param stepDown stops the leader-only work and campaigns again (called when leadership is lost
   *     while running, after {@link #leading()} turned false)
   */
  public static Leadership elected(
      String component, String identity, Runnable release, Runnable stepDown) {
    return new Leadership(component, true, identity, release, stepDown);
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
    for (Runnable r : whenLeading) {
      try {
        r.run();
      } catch (RuntimeException e) {
        // one listener's failure must not keep the others, or the election, from going on
        LOG.warnf(e, "%s: a task run on gaining the %s Lease failed", identity, component);
      }
    }
  }

  /**
   * Runs {@code task} each time this replica starts leading, right after {@link #leading()} turned
   * true: a reconciler that left its objects alone while another replica led ({@link FencedWrite})
   * brings them back here. Never run for a single replica, which leads from the start.
   */
  public void whenLeading(Runnable task) {
    whenLeading.add(task);
  }

  void stoppedLeading() {
    leading = false;
    if (stopping) {
      // the release itself checks that this replica still holds the Lease
      LOG.infof("%s stops leading on shutdown: releasing the Lease for a standby", identity);
      release.run();
    } else {
      LOG.warnf(
          "%s lost the %s Lease: stepping down (no more writes) and campaigning again",
          identity, component);
      stepDown.run();
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
   * leads without an election). A replica that loses the Lease stays up and campaigns again, so a
   * count above one means it lost and won the Lease back.
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
