package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Seeded random DRA worlds for differential testing against upstream's allocator: a few nodes, each
 * with a GPU pool split over several slices (sometimes incomplete, sometimes with a stale older
 * generation), partitionable GPUs on shared counters, shareable vGPUs with consumable capacity,
 * node-local NICs on the GPUs' PCIe roots and network-attached fabric pools; typed attributes (int,
 * bool, string, version) and capacities; DeviceClasses and request selectors drawn from a grammar
 * of realistic CEL expressions; claims with counts, {@code All}, {@code firstAvailable},
 * tolerations, capacity requests, {@code matchAttribute} and {@code distinctAttribute}; claims
 * allocated before the run; pods with claims and templates.
 *
 * <p>Deterministic: the same seed always yields the same scenario (only {@link Random} with the
 * seed, and ordered collections). Sizes stay small (at most four nodes and a few dozen devices) so
 * that any disagreement can be read by a person.
 *
 * <p>{@link Profile#EXTENDED} adds adminAccess requests, devices with binding conditions (some
 * binding to a node), a pool with per-device node selection, pods with a node name, node selector
 * or required node affinity, and more taints and tolerations (NoExecute, tolerationSeconds, empty
 * values, tolerate-all). Its extra choices come from a second random stream, so the basic stream,
 * and with it every basic seed quoted in the docs, stays as it was: an extended scenario is its
 * basic scenario plus these shapes.
 *
 * <p>{@link Profile#SHARED} is the extended scenario of the same seed plus claim sharing, from a
 * third stream: pods also use claims allocated before the run or claims of other pods, and a few
 * more pods use only such claims (kube-scheduler must keep those claims' allocations and place each
 * pod where their node selectors allow); and, from the same stream, vGPUs whose {@code cores}
 * capacity has a fractional request range (DRAFractionalCapacityRange, beta and on in 1.37), with
 * requests on, off and below its steps.
 *
 * <p>{@link Profile#ALPHA} is the extended scenario of the same seed plus, from a fourth stream,
 * the 1.37 alpha fields: compatibility groups on the partitions' counter consumptions, and derived
 * attributes (CEL over the device, some failing on some devices, some lists, some shadowing a
 * device attribute) with the {@code matchAttribute} or {@code distinctAttribute} constraints that
 * use them. Both allocators decide it with {@link Profile#featureGates()}.
 *
 * <p>{@link Profile#NEWER} is the extended scenario of the same seed plus, from a fifth stream, the
 * other 1.37 fields: {@code skipNodeOperations} on slices and {@code DRAOptionalNodeOperations} in
 * some nodes' {@code status.declaredFeatures}, {@code partitionTypeAttribute} on slices with
 * partitions and {@code nodeAllocatableResources} on GPUs; and its gates per seed: {@code
 * DRAOptionalNodeOperations} on (upstream's experimental allocator), another alpha gate on and it
 * off (experimental, refusing such devices), or no alpha gate (incubating, which reads none of
 * these fields).
 */
public final class ScenarioGenerator {

  public static final String GPU = "gpu.example.com";
  public static final String NIC = "nic.example.com";
  public static final String FABRIC = "fabric.example.com";
  public static final String PCIE = "resource.kubernetes.io/pcieRoot";
  public static final String TAINT_KEY = "example.com/maintenance";
  public static final String DEGRADED_KEY = "example.com/degraded";

  static final String[] MODELS = {"A100", "H100", "L4", "T4"};
  static final String[] VERSIONS = {"1.2.3", "1.10.0", "2.0.0", "2.1.0-beta.1", "535.104.5"};

  /** Which shapes a scenario may have. */
  public enum Profile {
    /** The original shapes; seeds documented in docs/dev/oracles.md replay with it. */
    BASIC,
    /** BASIC plus adminAccess, binding conditions, per-device node selection, pod placement. */
    EXTENDED,
    /**
     * EXTENDED plus pods that share claims with other pods and use claims allocated before the run,
     * whose node selectors must restrict where the pods go, and vGPUs whose {@code cores} request
     * policy is a fractional range (DRAFractionalCapacityRange), with requests for it.
     */
    SHARED,
    /**
     * EXTENDED plus the 1.37 alpha fields: {@code compatibilityGroups} on partitions and {@code
     * derivedAttributes} with constraints on them; decided with {@link #featureGates()} on.
     */
    ALPHA,
    /**
     * EXTENDED plus {@code skipNodeOperations}, nodes' {@code declaredFeatures}, {@code
     * partitionTypeAttribute} and {@code nodeAllocatableResources}, with gates drawn per seed
     * ({@link GeneratedScenario#featureGates()}).
     */
    NEWER;

    /**
     * {@code basic}, {@code extended}, {@code shared}, {@code alpha} or {@code newer}, any case.
     */
    public static Profile of(String name) {
      return valueOf(name.trim().toUpperCase(Locale.ROOT));
    }

    /**
     * The feature gates both allocators need for this profile's shapes, as --feature-gates; a
     * scenario's own are {@link GeneratedScenario#featureGates()}.
     */
    public String featureGates() {
      return this == ALPHA ? "DRADerivedAttributes=true,DRADeviceCompatibilityGroups=true" : "";
    }
  }

  private final long seed;
  private final Profile profile;

  /** The basic stream, for the counts of claims and whether there are pods. */
  private final Random basic;

  private final ProfileShapes shapes;
  private final ClusterDraw cluster;
  private final ClaimDraw claims;
  private final PodDraw pods;

  private ScenarioGenerator(long seed, Profile profile) {
    this.seed = seed;
    this.profile = profile;
    DrawStreams streams = new DrawStreams(seed, profile);
    this.basic = streams.basic;
    List<Node> nodes = new ArrayList<>();
    this.shapes = new ProfileShapes(streams, nodes);
    this.cluster = new ClusterDraw(streams, nodes, shapes);
    this.claims = new ClaimDraw(streams, shapes);
    this.pods = new PodDraw(streams, claims, shapes);
  }

  /** The basic profile's scenario for this seed. */
  public static GeneratedScenario generate(long seed) {
    return generate(seed, Profile.BASIC);
  }

  /** The scenario for this seed and profile. */
  public static GeneratedScenario generate(long seed, Profile profile) {
    return new ScenarioGenerator(seed, profile).build();
  }

  /** A node selector that names one node, as kube-scheduler writes it into an allocation. */
  static NodeSelector nodeName(String node) {
    return ClaimDraw.nodeName(node);
  }

  /** The draws in their fixed order: each stream's order is what keeps pinned seeds replayable. */
  private GeneratedScenario build() {
    cluster.draw();
    shapes.perDevicePool();
    List<ResourceClaim> all = new ArrayList<>();
    int old = basic.nextInt(4);
    for (int i = 0; i < old; i++) {
      ResourceClaim c = claims.allocated("old-" + i, cluster.free);
      if (c != null) {
        all.add(c);
      }
    }
    List<ResourceClaim> pending = new ArrayList<>();
    int count = 1 + basic.nextInt(6);
    for (int i = 0; i < count; i++) {
      pending.add(claims.pending("claim-" + i));
    }
    List<ResourceClaimTemplate> templates = new ArrayList<>();
    List<Pod> podList = new ArrayList<>();
    if (basic.nextBoolean()) {
      pods.draw(pending, templates, podList);
    }
    shapes.shareClaims(all, pending, templates, podList); // all: so far those allocated before
    all.addAll(pending);
    cluster.shuffle();
    // after the basic shuffle, whose draws depend on the number of slices
    shapes.placeExtraSlices(cluster.slices);
    String gates = shapes.newerFields(cluster.slices, cluster.nodes, profile.featureGates());
    return new GeneratedScenario(
        seed,
        SelectorGrammar.classes(),
        List.copyOf(cluster.slices),
        List.copyOf(all),
        List.copyOf(templates),
        List.copyOf(cluster.nodes),
        List.copyOf(podList),
        gates);
  }
}
