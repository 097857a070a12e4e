package io.kdra.devicedriver.config;

import io.kdra.devicedriver.discovery.MigMode;
import io.kdra.devicedriver.sharing.SharingSettings;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The device-driver's configuration, prefix {@code kdra.device-driver}. Every property is also an
 * environment variable ({@code kdra.device-driver.kubelet-registry-dir} is {@code
 * KDRA_DEVICE_DRIVER_KUBELET_REGISTRY_DIR}) and maps to one Helm value under {@code deviceDriver:}.
 * Paths must be the same inside and outside the driver container, because the kubelet dials the
 * socket paths the driver reports.
 */
@ConfigMapping(prefix = "kdra.device-driver")
public interface DriverConfig {

  /** The DRA driver name: the {@code driver} of ResourceSlices and allocation results. */
  @WithDefault("gpu.kdra.io")
  String name();

  /**
   * The node this driver runs on; also the name of its device pool. Set from the downward API
   * ({@code spec.nodeName}) in the DaemonSet.
   */
  @WithName("node-name")
  @WithDefault("${NODE_NAME:localhost}")
  String nodeName();

  /** Which discovery backend finds the devices. */
  @WithDefault("simulated")
  Backend backend();

  /**
   * The YAML inventory of the {@code simulated} backend. When the file does not exist a built-in
   * inventory of eight simulated GPUs is used.
   */
  @WithName("inventory-file")
  @WithDefault("/etc/kdra/inventory.yaml")
  Path inventoryFile();

  /**
   * Whether the {@code simulated} backend's inventory may name any device node. Off by default:
   * only harmless ones ({@code /dev/null}, {@code /dev/fuse}, ...) are accepted, because the nodes
   * go into the claims' CDI specs, and editing the inventory must not hand containers the node's
   * disks or memory.
   */
  @WithName("inventory-allow-any-device-node")
  @WithDefault("false")
  boolean inventoryAllowAnyDeviceNode();

  /** How often discovery runs again (and the simulated inventory file is checked for changes). */
  @WithName("discovery-interval")
  @WithDefault("10s")
  Duration discoveryInterval();

  /** Settings of the {@code nvidia} backend. */
  Nvidia nvidia();

  /** Settings of the {@code tpu} backend. */
  Tpu tpu();

  /** How whole GPUs are shared between claims; see docs/user/sharing.md. */
  Sharing sharing();

  /**
   * MIG: {@code off} (MIG-enabled GPUs are whole devices), {@code static} (the GPU instances an
   * admin created are the devices) or {@code dynamic} (every profile placement is a partitionable
   * device; prepare creates the instance, unprepare destroys it).
   */
  @WithName("mig-mode")
  @WithDefault("off")
  MigMode migMode();

  /** The kubelet's plugin registry directory, where {@code <driver>-reg.sock} is created. */
  @WithName("kubelet-registry-dir")
  @WithDefault("/var/lib/kubelet/plugins_registry")
  Path kubeletRegistryDir();

  /** The kubelet's plugins directory; the DRA socket is {@code <dir>/<driver>/dra.sock}. */
  @WithName("kubelet-plugins-dir")
  @WithDefault("/var/lib/kubelet/plugins")
  Path kubeletPluginsDir();

  /**
   * The driver pod's UID (the chart sets it from the downward API, {@code metadata.uid}). When set,
   * each driver pod registers with sockets of its own, named as upstream's kubeletplugin helper
   * names them for a rolling update ({@code <registry>/<driver>-<uid>-reg.sock}, {@code
   * <plugins>/<driver>/dra-<uid>.sock}), so that an old and a new driver pod can serve the kubelet
   * side by side during an upgrade with surge: needs kubelet 1.33 or newer. Unset: one fixed pair,
   * {@code <driver>-reg.sock} and {@code dra.sock}, and a node has no driver while its pod
   * restarts.
   */
  @WithName("pod-uid")
  Optional<String> podUid();

  /** Where per-claim CDI spec files are written; {@code /var/run/cdi} is for dynamic specs. */
  @WithName("cdi-dir")
  @WithDefault("/var/run/cdi")
  Path cdiDir();

  /**
   * The checkpoint of prepared claims. It must survive driver restarts, so it lives on the host (by
   * default next to the DRA socket), not in the container.
   */
  @WithName("checkpoint-file")
  @WithDefault("/var/lib/kubelet/plugins/gpu.kdra.io/checkpoint.json")
  Path checkpointFile();

  /** How many claims are prepared or unprepared at the same time, over all kubelet calls. */
  @WithName("prepare-concurrency")
  @WithDefault("8")
  int prepareConcurrency();

  /**
   * Whether the kubelet plugin handles one gRPC call at a time (as the upstream Go helper does by
   * default). Off by default: the driver locks per claim, so unrelated pods need not wait.
   */
  @WithDefault("false")
  boolean serialize();

  /**
   * Whether the driver reports each prepared device in its claim's {@code status.devices} (a {@code
   * Ready} condition, the node and the CDI device ids) and removes the entry on unprepare. Needs
   * {@code patch} on {@code resourceclaims/status} and {@code associated-node:patch} on {@code
   * resourceclaims/driver} for the driver's name, which the chart grants while this is on.
   */
  @WithName("claim-device-status")
  @WithDefault("true")
  boolean claimDeviceStatus();

  /**
   * Whether containers get each request's device-metadata file (KEP-5304, v1beta1, as upstream's
   * kubeletplugin helper writes it) under {@code /var/run/kubernetes.io/dra-device-attributes/}.
   */
  @WithName("device-metadata")
  @WithDefault("true")
  boolean deviceMetadata();

  /**
   * The node operations (kubelet gRPC calls) that this driver's devices need not have, published as
   * the ResourceSlices' {@code skipNodeOperations} (Kubernetes 1.37, alpha, feature gate {@code
   * DRAOptionalNodeOperations}): {@code *} (all), or {@code NodeUnprepareResources}, or both {@code
   * NodePrepareResources} and {@code NodeUnprepareResources}. For devices that need no step on the
   * node (nothing to set up, no CDI device for containers): a kubelet with the gate on then skips
   * those calls for claims whose devices all come from such slices. Unset (the default): every
   * device is prepared. The API server drops the field while its gate is off.
   */
  @WithName("skip-node-operations")
  Optional<List<String>> skipNodeOperations();

  /** The stream of inventory snapshots to the slice-publisher. */
  Publisher publisher();

  /** The periodic check of checkpointed claims against the API. */
  @WithName("stale-claims")
  StaleClaims staleClaims();

  /** Hooks for the end-to-end tests; never set them on a real node. */
  @WithName("test-only")
  TestOnly testOnly();

  /** Hooks for the end-to-end tests; the chart does not expose them. */
  interface TestOnly {
    /**
     * TEST ONLY: a pause inside every prepare, after the claim's CDI spec is written and before its
     * checkpoint entry, so that a test can kill the driver in that window. Refused unless {@code
     * kdra.device-driver.backend=simulated}. Zero (the default) is off.
     */
    @WithName("prepare-delay")
    @WithDefault("0s")
    Duration prepareDelay();

    /**
     * TEST ONLY: a file in which the {@code simulated} backend keeps its simulated GPUs' state (MIG
     * instances, compute modes, time-slice intervals, MPS daemons), read back when the driver
     * starts again, as real GPUs keep theirs across driver restarts (the MPS daemons excepted: they
     * die with the driver), so that a test can compare it with the checkpoint. Refused unless
     * {@code kdra.device-driver.backend=simulated}. Unset (the default): in memory only.
     */
    @WithName("simulated-gpu-state-file")
    Optional<Path> simulatedGpuStateFile();
  }

  /**
   * Prepared claims whose ResourceClaim is gone (deleted, replaced under the same name,
   * deallocated, or reserved for no pod) are unprepared by the driver itself once that has lasted
   * {@link #grace()}: the kubelet's own unprepare never came (a force-deleted pod, a driver down
   * when the pod went), and their CDI spec, MIG instance or MPS daemon would otherwise stay for
   * good.
   */
  interface StaleClaims {
    /**
     * How often the checkpoint is compared with the API (one GET per claim, and one list of all
     * claims while a claim rebuilt from its CDI spec has no name yet); 0s turns it off.
     */
    @WithName("check-interval")
    @WithDefault("2m")
    Duration checkInterval();

    /** How long a claim must be seen gone before it is unprepared. */
    @WithDefault("5m")
    Duration grace();
  }

  /** Settings of the {@code nvidia} backend. */
  interface Nvidia {
    /** The nvidia-smi executable (inside the container: the host's driver root is mounted). */
    @WithName("smi-path")
    @WithDefault("nvidia-smi")
    String smiPath();

    /** How long one nvidia-smi run may take. */
    @WithDefault("10s")
    Duration timeout();

    /**
     * The host root under which {@code /proc/driver/nvidia} and {@code /sys/bus/pci} are read
     * (device minor numbers, PCIe roots). {@code /} on a node; a fake tree in tests.
     */
    @WithName("host-root")
    @WithDefault("/")
    Path hostRoot();
  }

  /** Sharing of whole GPUs between claims (consumable capacity). */
  interface Sharing {
    /**
     * {@code exclusive} (one claim per GPU), {@code time-slicing} or {@code mps}: the latter two
     * advertise every whole GPU with {@code allowMultipleAllocations} and a {@code shares}
     * capacity, and prepare configures the GPU accordingly.
     */
    @WithDefault("exclusive")
    SharingSettings.Strategy strategy();

    /** How many shares one GPU has: at most this many claims share it. */
    @WithDefault("8")
    int shares();

    /** The granularity of {@code memory} requests on a shared GPU. */
    @WithName("memory-step")
    @WithDefault("1Gi")
    String memoryStep();

    /** Host directory of the per-GPU MPS pipe and log directories (mounted into containers). */
    @WithName("mps-root")
    @WithDefault("/run/kdra/mps")
    Path mpsRoot();

    /** The MPS control executable. */
    @WithName("mps-control-path")
    @WithDefault("nvidia-cuda-mps-control")
    String mpsControlPath();

    /**
     * Whether MPS claims of several namespaces may be prepared on the node at once. MPS isolates
     * nothing between its clients (they share one {@code /dev/shm}), so by default a claim of a
     * second namespace is refused while another namespace's MPS claims are prepared.
     */
    @WithName("mps-across-namespaces")
    @WithDefault("false")
    boolean mpsAcrossNamespaces();
  }

  /** Settings of the {@code tpu} backend. */
  interface Tpu {
    /** The root under which {@code /dev/accel*} and {@code /dev/vfio/*} are looked for. */
    @WithName("host-root")
    @WithDefault("/")
    Path hostRoot();

    /**
     * The TPU accelerator type, e.g. {@code tpu-v6e-slice}. When absent, the node label {@code
     * cloud.google.com/gke-tpu-accelerator} is used.
     */
    @WithName("accelerator-type")
    Optional<String> acceleratorType();

    /**
     * The slice topology, e.g. {@code 2x4}; when absent, {@code cloud.google.com/gke-tpu-topology}.
     */
    Optional<String> topology();
  }

  /** The inventory stream to the slice-publisher. */
  interface Publisher {
    /** host:port of the slice-publisher's gRPC port; absent disables the stream (local runs). */
    Optional<String> address();

    /**
     * The token sent as {@code authorization: Bearer}: the pod's ServiceAccount token, re-read on
     * every connect because the kubelet rotates it.
     */
    @WithName("token-file")
    @WithDefault("/var/run/secrets/kubernetes.io/serviceaccount/token")
    Path tokenFile();

    /** First reconnect delay; doubles on each failure up to {@link #maxBackoff()}. */
    @WithName("initial-backoff")
    @WithDefault("1s")
    Duration initialBackoff();

    /** Largest reconnect delay. */
    @WithName("max-backoff")
    @WithDefault("60s")
    Duration maxBackoff();

    /** A snapshot is re-sent this often even without changes, as a heartbeat. */
    @WithDefault("60s")
    Duration heartbeat();

    /**
     * How long a sent snapshot may go unacknowledged before the stream is given up and the driver
     * connects again (reaching another publisher replica): a publisher that is frozen or cut off
     * without a reset keeps the connection open and answers nothing. Must be well below the
     * publisher's {@code stale.taint-after}; a snapshot is sent at least every heartbeat.
     */
    @WithName("ack-timeout")
    @WithDefault("15s")
    Duration ackTimeout();

    /** TLS to the publisher; plain text without a CA file. */
    PublisherTls tls();
  }

  /** How the driver verifies the publisher's certificate. */
  interface PublisherTls {
    /**
     * PEM file of the CA(s) the publisher's certificate must chain to (read again when it changes);
     * set, the stream is TLS-only.
     */
    @WithName("ca-file")
    Optional<Path> caFile();

    /**
     * The name the certificate must carry, when the address is not it (an IP, a host port); the
     * chart sets the publisher Service's DNS name.
     */
    @WithName("server-name")
    Optional<String> serverName();
  }

  /** Discovery backends. */
  enum Backend {
    /** Devices from a YAML file, for local runs, tests and demos. */
    simulated,
    /** NVIDIA GPUs found by nvidia-smi. */
    nvidia,
    /** Google TPU chips found in the device tree. */
    tpu
  }
}
