package io.kdra.claimcontroller.config;

import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.leadership.LeaderElectionSettings;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/**
 * The claim-controller's settings, under {@code kdra.claim-controller}. Each maps 1:1 to an
 * environment variable ({@code KDRA_CLAIM_CONTROLLER_...}) and to a chart value under {@code
 * claimController:}.
 */
@ConfigMapping(prefix = "kdra.claim-controller")
public interface ClaimControllerConfig {

  /**
   * Pods whose {@code spec.schedulerName} equals this are scheduled by this controller; all others
   * are left to their scheduler.
   */
  @WithDefault("dra-claim-controller")
  String schedulerName();

  /**
   * {@code adopt}: wait for kube-controller-manager to create claims from ResourceClaimTemplates
   * and use those, as on every normal cluster. {@code own}: create them (control planes without
   * kube-controller-manager's resourceclaim controller). The default is the safe one (with {@code
   * own} beside kube-controller-manager both would create claims), and only here: the chart leaves
   * it unset.
   */
  @WithDefault("adopt")
  TemplateMode templateMode();

  /**
   * kube-scheduler's feature gates that change what this controller's scheduler decides beyond its
   * allocator (those are {@code allocator.feature-gates}), in upstream's {@code --feature-gates}
   * syntax: {@code TopologyAwareWorkloadScheduling=true} honours PodGroups' topology constraints. A
   * gate not named keeps Kubernetes 1.37's default (off). An unknown gate or a value that is no
   * bool stops the start, naming it.
   */
  Optional<String> featureGates();

  /** Backoff for pods that cannot be placed. */
  Retry retry();

  /** Evicting pods whose devices get a {@code NoExecute} taint, in {@code own} mode. */
  DeviceTaintEviction deviceTaintEviction();

  /** The allocator's optional features. */
  Allocator allocator();

  /** Leader election among replicas. */
  LeaderElectionSettings leaderElection();

  /** Backoff settings. */
  interface Retry {

    /** Delay before the first retry of an unschedulable pod; doubles on each further one. */
    @WithDefault("1s")
    Duration initialBackoff();

    /** Longest delay between retries of an unschedulable pod. */
    @WithDefault("5m")
    Duration maxBackoff();

    /**
     * How often one write is retried after a conflict (re-reading the object each time) before the
     * whole reconciliation is retried.
     */
    @WithDefault("5")
    int conflictRetries();

    /**
     * How often the leader looks at allocations whose write ended without an answer (the API server
     * restarted under it) and that no pod attempt has sent again since the look before, its pod
     * having been deleted: each is undone on the claim's version it was written on, or left to the
     * claim's newer version, and its devices are free for other pods within about two intervals.
     * Only when to look: versions decide what is done.
     */
    @WithDefault("5s")
    Duration settleInterval();
  }

  /** Upstream's device-taint eviction controller, run here where kube-controller-manager is not. */
  interface DeviceTaintEviction {

    /**
     * In {@code own} mode, evict the pods whose allocated devices carry a {@code NoExecute} taint
     * (from their slice or a DeviceTaintRule) that their claim does not tolerate, and write the
     * rules' {@code EvictionInProgress} condition. In {@code adopt} mode kube-controller-manager
     * does it and this setting has no effect.
     */
    @WithDefault("true")
    boolean enabled();
  }

  /** dra-core's allocator, as this controller runs it. */
  interface Allocator {

    /**
     * Kubernetes feature gates of the allocator, in upstream's {@code --feature-gates} syntax
     * ({@code DRAPrioritizedList=false,DRAAdminAccess=true}); a gate not named keeps Kubernetes
     * 1.36's default (on). An unknown gate or a value that is no bool stops the start, naming it.
     */
    Optional<String> featureGates();

    /**
     * How long one pod's first scheduling attempt may search for devices (all nodes together); each
     * further attempt of the same pod may search twice as long, up to {@link #maxSearchDeadline}.
     * See {@code SearchDeadline} for why.
     */
    @WithDefault("1s")
    Duration searchDeadline();

    /** The longest any one attempt may search for devices. */
    @WithDefault("10s")
    Duration maxSearchDeadline();
  }
}
