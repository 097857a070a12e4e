package io.kdra.leadership;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfig;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * How an elected service's leadership is built from its {@link LeaderElectionSettings}: the Lease's
 * name, namespace and this replica's identity, a {@link Leadership} (elected, or single when the
 * election is off), the {@link LeaseFence}, the meters and the election's own configuration. Each
 * service's CDI beans only hand this class its settings and call it, so that the rules live once.
 */
public final class ElectionWiring {

  private final String component;
  private final String propertyPrefix;
  private final LeaderElectionSettings settings;
  private final KubernetesClient client;
  private final boolean electing;
  private final String identity;

  /** What starts at each win of an election this wiring runs ({@link #electorConfig}). */
  private volatile Runnable whenLeading = () -> {};

  /** The election this wiring runs now, if any; null once {@link #stopElections} closed it. */
  private CompletableFuture<?> election = CompletableFuture.completedFuture(null);

  /**
   * @param component the service's name ({@code claim-controller}): logs, meters, the default Lease
   *     name {@code kdra-<component>}
   * @param propertyPrefix where the settings live ({@code kdra.slice-publisher.leader-election}),
   *     for errors
   * @param electionRuns false where the framework does not elect in this run (a test or dev
   *     profile) even though the settings enable it: then this replica is the single one
   * @param hostname the pod name, usually {@code HOSTNAME}; may be null
   */
  public ElectionWiring(
      String component,
      String propertyPrefix,
      LeaderElectionSettings settings,
      KubernetesClient client,
      boolean electionRuns,
      String hostname) {
    this.component = Objects.requireNonNull(component, "component");
    this.propertyPrefix = Objects.requireNonNull(propertyPrefix, "propertyPrefix");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.client = Objects.requireNonNull(client, "client");
    this.electing = settings.enabled() && electionRuns;
    this.identity = Leadership.identity(settings.identity(), hostname, component);
  }

  /** Whether replicas compete for the Lease (false: this one always leads). */
  public boolean electing() {
    return electing;
  }

  public String component() {
    return component;
  }

  public LeaderElectionSettings settings() {
    return settings;
  }

  public String identity() {
    return identity;
  }

  public String leaseName() {
    return settings.leaseName().filter(s -> !s.isBlank()).orElse("kdra-" + component);
  }

  /** The configured namespace, else this replica's own; an error naming the property if neither. */
  public String leaseNamespace() {
    return LeaseRelease.namespace(
        settings.leaseNamespace(), client, propertyPrefix + ".lease-namespace");
  }

  /**
   * This replica's leadership: elected, or single when not {@link #electing()}, because no election
   * would ever call it the leader. Elected, it is released on shutdown; when the Lease is lost
   * while running, {@code stepDown} stops the leader-only work and a new election starts ({@link
   * #elect}).
   */
  public Leadership leadership(Runnable stepDown) {
    if (!electing) {
      return Leadership.single(component, identity);
    }
    LeaseRelease release = new LeaseRelease(client, leaseNamespace(), leaseName(), identity);
    AtomicReference<Leadership> self = new AtomicReference<>();
    Leadership l =
        Leadership.elected(
            component,
            identity,
            release::release,
            () -> {
              stepDown.run();
              elect(self.get(), whenLeading);
            });
    self.set(l);
    return l;
  }

  /**
   * Starts an election for {@code leadership} with fabric8's elector; {@code whenLeading} runs at
   * this win and each later one. Nothing once {@link #stopElections} was called.
   */
  public void elect(Leadership leadership, Runnable whenLeading) {
    LeaderElectionConfig config = electorConfig(leadership, whenLeading);
    synchronized (this) {
      if (election != null) {
        election = client.leaderElector().withConfig(config).build().start();
      }
    }
  }

  /**
   * Ends the election this wiring runs, for good: on shutdown, after {@link
   * Leadership#shuttingDown} and after the writing stopped, since a leader releases the Lease here.
   */
  public void stopElections() {
    CompletableFuture<?> running;
    synchronized (this) {
      running = election;
      election = null;
    }
    if (running != null) {
      // fabric8 ends the leadership on this thread (onStopLeading), so the release is done
      // before this returns
      running.cancel(true);
    }
  }

  /** The second opinion before each write: open when not electing, else watching the Lease. */
  public LeaseFence fence(Clock clock) {
    if (!electing) {
      return LeaseFence.open();
    }
    return LeaseFence.watching(
        client, leaseNamespace(), leaseName(), identity, settings.renewDeadline(), clock);
  }

  /** The leadership meters; {@code leadership} may answer null until it exists. */
  public void registerMeters(MeterRegistry registry, Supplier<Leadership> leadership) {
    LeadershipMeters.register(registry, component, leadership);
  }

  /**
   * fabric8's elector configuration, for a service that runs the election itself. {@code
   * releaseOnCancel} is off: fabric8's release patches the Lease and keeps the holder, so a standby
   * would still wait a whole lease duration; {@link Leadership} releases it instead.
   *
   * @param whenLeading what starts once this replica leads, in this election and in those started
   *     after a lost Lease
   */
  public LeaderElectionConfig electorConfig(Leadership leadership, Runnable whenLeading) {
    this.whenLeading = whenLeading;
    return new LeaderElectionConfigBuilder()
        .withName(leaseName())
        .withLock(new ToleratingLeaseLock(leaseNamespace(), leaseName(), identity))
        .withLeaseDuration(settings.leaseDuration())
        .withRenewDeadline(settings.renewDeadline())
        .withRetryPeriod(settings.retryPeriod())
        .withReleaseOnCancel(false)
        .withLeaderCallbacks(leadership.callbacks(whenLeading))
        .build();
  }
}
