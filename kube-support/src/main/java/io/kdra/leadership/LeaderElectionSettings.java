package io.kdra.leadership;

import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/**
 * The leader-election settings of every elected service, one group under each service's prefix
 * ({@code kdra.claim-controller.leader-election.*}, {@code kdra.slice-publisher.leader-election.*},
 * {@code kdra.computeclass-bridge.leader-election.*}), so that the names and defaults are the same
 * everywhere.
 */
public interface LeaderElectionSettings {

  /** Whether to elect a leader; turn off only when running a single replica. */
  @WithDefault("true")
  boolean enabled();

  /** Name of the coordination.k8s.io Lease; empty: {@code kdra-<component>}. */
  Optional<String> leaseName();

  /** Namespace of the Lease; empty: the namespace this replica runs in. */
  Optional<String> leaseNamespace();

  /** This replica's identity in the Lease; empty: the pod name (HOSTNAME), else a random one. */
  Optional<String> identity();

  /** How long a lease is valid without renewal. */
  @WithDefault("15s")
  Duration leaseDuration();

  /** How long the leader keeps trying to renew before giving up leadership. */
  @WithDefault("10s")
  Duration renewDeadline();

  /** How often candidates retry acquiring the lease. */
  @WithDefault("2s")
  Duration retryPeriod();
}
