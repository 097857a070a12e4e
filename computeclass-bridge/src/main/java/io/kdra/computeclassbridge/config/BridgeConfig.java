package io.kdra.computeclassbridge.config;

import io.kdra.leadership.LeaderElectionSettings;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Configuration of the computeclass-bridge, prefix {@code kdra.computeclass-bridge}; every property
 * is also an environment variable ({@code kdra.computeclass-bridge.namespaces.selector} is {@code
 * KDRA_COMPUTECLASS_BRIDGE_NAMESPACES_SELECTOR}) and a value under {@code computeClassBridge:} in
 * the Helm chart.
 */
@ConfigMapping(prefix = "kdra.computeclass-bridge")
public interface BridgeConfig {

  /** Where the generated ResourceClaimTemplates go. */
  Namespaces namespaces();

  /** The accelerator catalog. */
  Catalog catalog();

  /**
   * Appended to an accelerator type to name its DeviceClass: {@code nvidia-l4} becomes {@code
   * nvidia-l4.computeclass.kdra.io}. Changing it renames every generated DeviceClass.
   */
  @WithDefault(".computeclass.kdra.io")
  String deviceClassSuffix();

  /**
   * Name of the single request of every generated template; a container that lists the claim
   * requests it uses names this one.
   */
  @WithDefault("accelerator")
  String requestName();

  /** Leader election among replicas: the same settings as every elected service's. */
  LeaderElectionSettings leaderElection();

  /** Scale-out through Karpenter: NodePools by the ComputeClasses' priorities. */
  ScaleOut scaleOut();

  /** Namespace selection: the union of both rules. */
  interface Namespaces {

    /** The {@link #selector()} value that turns selection by label off. */
    String NO_SELECTOR = "none";

    /** Namespaces that always get the templates, e.g. {@code team-a,team-b}. */
    Optional<List<String>> names();

    /**
     * A label selector over namespaces ({@code a=b}, {@code a!=b}, {@code a}, {@code !a}, {@code a
     * in (x,y)}, {@code a notin (x,y)}); namespaces labelled later get the templates when the label
     * appears, and lose them when it goes. {@code none} selects no namespace by label, leaving only
     * {@link #names()}.
     */
    @WithDefault("computeclass.kdra.io/templates=enabled")
    String selector();
  }

  /** Which catalog, and which drivers' attributes its selectors use. */
  interface Catalog {

    /**
     * Driver profiles of the catalog to use: {@code kdra-gpu}, {@code kdra-tpu} (our
     * device-driver), {@code gke-gpu} (NVIDIA's DRA driver, {@code gpu.nvidia.com}), {@code
     * gke-tpu} (Google's TPU DRA driver, {@code tpu.google.com}). A DeviceClass matches devices of
     * any listed profile.
     */
    @WithDefault("kdra-gpu,kdra-tpu")
    List<String> profiles();

    /**
     * Driver name per profile, for a driver deployed under another name, e.g. {@code
     * kdra.computeclass-bridge.catalog.drivers.kdra-gpu=gpu.example.org}.
     */
    Map<String, String> drivers();

    /**
     * A ConfigMap laid over the shipped catalog (key {@link #configMapKey()}); read from the
     * bridge's own namespace unless {@link #configMapNamespace()} says otherwise. Its changes apply
     * without a restart. When its content is invalid the shipped catalog is used and every
     * ComputeClass reports {@code Degraded} with reason {@code CatalogInvalid}.
     */
    Optional<String> configMap();

    /** Namespace of {@link #configMap()}; empty means the namespace the bridge runs in. */
    Optional<String> configMapNamespace();

    /** Key of the catalog YAML inside the ConfigMap. */
    @WithDefault("accelerators.yaml")
    String configMapKey();
  }

  /** Karpenter NodePools ({@code karpenter.sh/v1}) per ComputeClass, weighted by priority. */
  interface ScaleOut {

    /**
     * Whether the bridge writes a Karpenter NodePool per priority of each ComputeClass. Nothing is
     * written while the API server does not serve {@code karpenter.sh/v1} NodePools.
     */
    @WithDefault("false")
    boolean enabled();

    /**
     * The instance types Karpenter may launch, as {@code <instance type>=<accelerator
     * type>:<count>}, e.g. {@code a2-highgpu-1g=nvidia-tesla-a100:1,g2-standard-24=nvidia-l4:2}. A
     * priority's NodePool selects the instance types with exactly its accelerator and count.
     */
    Optional<List<String>> instanceTypes();

    /** API group of the NodeClass every NodePool refers to (the cloud provider's). */
    @WithDefault("karpenter.kwok.sh")
    String nodeClassGroup();

    /** Kind of that NodeClass, e.g. {@code EC2NodeClass} on AWS. */
    @WithDefault("KWOKNodeClass")
    String nodeClassKind();

    /** Name of that NodeClass. */
    @WithDefault("default")
    String nodeClassName();
  }
}
