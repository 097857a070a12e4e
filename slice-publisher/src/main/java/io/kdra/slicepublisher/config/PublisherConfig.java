package io.kdra.slicepublisher.config;

import io.kdra.leadership.LeaderElectionSettings;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Configuration of the slice-publisher (prefix {@code kdra.slice-publisher}). Every property maps
 * to an environment variable ({@code KDRA_SLICE_PUBLISHER_MAX_WRITES_PER_SECOND}) and a Helm value
 * under {@code slicePublisher:}; docs/user/slice-publisher.md lists them.
 */
@ConfigMapping(prefix = "kdra.slice-publisher")
public interface PublisherConfig {

  /**
   * The DRA driver names whose ResourceSlices this publisher writes. It is their single writer:
   * snapshots of other drivers are refused, and slices of other drivers are never touched.
   */
  @WithDefault("gpu.kdra.io")
  Set<String> drivers();

  /** How unhealthy devices are marked. */
  Taint unhealthyTaint();

  /** Staleness of drivers that stop reporting. */
  Stale stale();

  /**
   * Node label keys whose values are copied into every node-local device as string attributes, so
   * that selectors can target them. The attribute name is the label key with its name part turned
   * into a C identifier ({@code cloud.google.com/compute-class} becomes {@code
   * cloud.google.com/compute_class}; a key without prefix lands in the driver's domain). An
   * attribute the driver reports itself wins. Empty: none.
   */
  Optional<List<String>> nodeLabelAttributes();

  /**
   * Network-attached pools by pool name. The devices of such a pool are the ones that the driver
   * instance on {@code source-node} reports; they are published once, reachable from the nodes
   * matching {@code node-selector} (or from all nodes), instead of as that node's pool.
   */
  Map<String, NetworkPool> networkPools();

  /**
   * Upper bound on API writes (create, update, delete) per second, summed over all pools. Bursts of
   * up to one second's worth are allowed. Must be positive.
   */
  @WithDefault("20")
  double maxWritesPerSecond();

  /**
   * How often every pool is compared with the API server even without events. Cheap: it writes
   * nothing when nothing changed. The staleness and grace timers do not wait for it: a pool is
   * planned again at the instant its next timer is due.
   */
  @WithDefault("30s")
  Duration resyncPeriod();

  /**
   * Watch ResourceSlices with a {@code spec.driver} field selector when exactly one driver is
   * served, so that other drivers' slices are not cached. Off: watch all slices (still never
   * writing other drivers' ones); needed only for servers without field selectors.
   */
  @WithDefault("true")
  boolean sliceFieldSelector();

  /**
   * The most devices one driver may report for one node; a snapshot with more is refused whole (its
   * ack names the count and this limit), so that one compromised node cannot load the API server
   * and every allocator with tens of thousands of devices. The planner splits a pool into slices of
   * at most 128 devices (upstream's limit per slice), so 1024 is 8 slices: room for 8 GPUs with
   * every MIG placement each.
   */
  @WithDefault("1024")
  int maxDevicesPerNode();

  /** Who may report which node. */
  Auth auth();

  /** The inventory gRPC's certificate (InventoryTls). */
  InventoryTls inventoryTls();

  /** How long the inventory gRPC keeps a driver's connection (InventoryConnections). */
  InventoryConnections inventoryConnections();

  /** Leader election among publisher replicas. */
  LeaderElectionSettings leaderElection();

  /** A device taint. */
  interface Taint {
    /** Taint key (a label name). */
    @WithDefault("kdra.io/unhealthy")
    String key();

    /** Taint effect: NoSchedule or NoExecute ({@code None} needs Kubernetes 1.35+). */
    @WithDefault("NoSchedule")
    String effect();
  }

  /** Staleness timers, measured from a driver's last snapshot (or from taking leadership). */
  interface Stale {
    /** After this long without a snapshot, all devices of the pool get the stale taint. */
    @WithDefault("2m")
    Duration taintAfter();

    /**
     * After this long without a snapshot, the pool's slices are deleted. Must exceed taintAfter.
     */
    @WithDefault("10m")
    Duration removeAfter();

    /**
     * After this long since a driver's stream ended (its process died, restarts, or lost its
     * connection) without a new one, all devices of the pool get the stale taint with the value
     * {@code disconnected}, so that no new pod is placed where nothing will prepare it. Long enough
     * for a driver restart.
     */
    @WithDefault("20s")
    Duration disconnectedTaintAfter();

    /**
     * A driver whose snapshot says its last successful discovery pass is older than this many of
     * its discovery intervals gets the stale taint on every device, with the value {@code
     * discovery-stale}: it still reports, but no longer finds its devices (discovery fails or
     * hangs). Judged per snapshot, so it shows at the next heartbeat and clears at the first
     * snapshot after discovery works again. At least 1.
     */
    @WithDefault("6")
    int discoveryIntervals();

    /** Key of the taint put on devices of a stale driver. */
    @WithDefault("kdra.io/driver-unresponsive")
    String taintKey();

    /** Effect of the stale taint. */
    @WithDefault("NoSchedule")
    String taintEffect();
  }

  /** A network-attached pool. */
  interface NetworkPool {
    /** Driver whose snapshots supply the devices. */
    String driver();

    /** Node whose driver instance reports the devices of this pool. */
    String sourceNode();

    /**
     * Label equalities (all must hold) selecting the nodes that reach the devices. Empty: all nodes
     * ({@code allNodes: true}).
     */
    Map<String, String> nodeSelector();
  }

  /**
   * The inventory gRPC over TLS: the server's certificate and key, PEM files read again every
   * {@code reload-period}, so that a renewed certificate is served without a restart. Unset: the
   * server speaks whatever {@code quarkus.grpc.server.*} says (plain text by default).
   */
  interface InventoryTls {
    /** The certificate chain (the chart: its Secret's tls.crt). */
    Optional<Path> certificate();

    /** Its private key (tls.key). */
    Optional<Path> key();

    /** How often the files are read again; a change is served to new connections. */
    @WithDefault("30s")
    Duration reloadPeriod();
  }

  /**
   * Connection limits of the inventory gRPC: a driver's connection is pinned to the publisher pod
   * it first reached, so none may outlive its use.
   */
  interface InventoryConnections {
    /**
     * Every connection is closed after this long (grpc-java adds ±10 %), so that connections are
     * spread over the replicas again and every stream is authenticated again; its driver reconnects
     * at once.
     */
    @WithDefault("30m")
    Duration maxAge();

    /** How long the stream on a connection past its age may go on before it is cut. */
    @WithDefault("10s")
    Duration maxAgeGrace();

    /**
     * A connection without a stream is closed after this long (at least 1s): a standby's refused
     * connection, which a driver would otherwise keep.
     */
    @WithDefault("5s")
    Duration maxIdle();
  }

  /** Authentication of driver streams. */
  interface Auth {
    /**
     * Check each stream's ServiceAccount token with a TokenReview and refuse snapshots for any node
     * but the driver pod's own. Off only for local runs: then any caller may report any node.
     */
    @WithDefault("true")
    boolean enabled();

    /**
     * The device-driver's ServiceAccounts, as {@code namespace:name}: only tokens of their pods may
     * report. Unset: every report is refused (the chart sets its driver's).
     */
    Optional<Set<String>> serviceAccounts();

    /**
     * The audience the drivers' tokens are issued for (the chart projects such a token into the
     * driver pods); a token for the API server or another audience is refused.
     */
    @WithDefault("kdra-slice-publisher")
    String audience();

    /**
     * TokenReviews one caller address may cause at once: a new stream whose token is not in the
     * review cache (valid answers are kept up to a minute, refusals 10 s) takes one; past the
     * bucket, streams are refused with RESOURCE_EXHAUSTED without a review.
     */
    @WithDefault("10")
    int peerReviewBurst();

    /** How often one more review is allowed per caller address, up to the burst. */
    @WithDefault("1s")
    Duration peerReviewInterval();
  }
}
