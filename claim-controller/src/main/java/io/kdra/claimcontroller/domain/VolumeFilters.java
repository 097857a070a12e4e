package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * kube-scheduler 1.37's default volume plugins for a pod with {@code persistentVolumeClaim} or
 * {@code ephemeral} volumes, run in the default profile's order: {@link VolumeRestrictions}, {@link
 * NodeVolumeLimits} (CSI), {@link VolumeBinding}, {@link VolumeZone}. {@link #prefilter} gives
 * their PreFilter verdict (a reason that holds for every node, in upstream's words) or the state
 * their Filter reads; {@link #reject} gives one node's verdict. Unbound claims of a {@code
 * WaitForFirstConsumer} class are bound to existing volumes or provisioned on the chosen node
 * ({@link #volumesOn}). The one entry point, so that callers see the four plugins as upstream's
 * framework runs them. Pure, but for remembering each node's answer within one attempt.
 */
public final class VolumeFilters {

  // Each plugin's reasons, kept here too so that callers and tests name them in one place.

  /** VolumeRestrictions' inline-disk conflict ({@code ErrReasonDiskConflict}). */
  public static final String REASON_DISK_CONFLICT = VolumeRestrictions.REASON_DISK_CONFLICT;

  /** VolumeRestrictions' {@code ErrReasonReadWriteOncePodConflict}. */
  public static final String REASON_RWOP_CONFLICT = VolumeRestrictions.REASON_RWOP_CONFLICT;

  /** NodeVolumeLimits' {@code ErrReasonMaxVolumeCountExceeded}. */
  public static final String REASON_MAX_VOLUME_COUNT = NodeVolumeLimits.REASON_MAX_VOLUME_COUNT;

  /** VolumeBinding's {@code ErrReasonNodeConflict}. */
  public static final String REASON_NODE_CONFLICT = VolumeBinding.REASON_NODE_CONFLICT;

  /** VolumeBinding's {@code ErrReasonBindConflict}. */
  public static final String REASON_BIND_CONFLICT = VolumeBinding.REASON_BIND_CONFLICT;

  /** VolumeBinding's {@code ErrReasonNotEnoughSpace}. */
  public static final String REASON_NOT_ENOUGH_SPACE = VolumeBinding.REASON_NOT_ENOUGH_SPACE;

  /** VolumeBinding's {@code ErrReasonPVNotExist}. */
  public static final String REASON_PV_NOT_EXIST = VolumeBinding.REASON_PV_NOT_EXIST;

  /** VolumeZone's {@code ErrReasonConflict}. */
  public static final String REASON_ZONE_CONFLICT = VolumeZone.REASON_ZONE_CONFLICT;

  /** VolumeBinding's PreFilter reason for claims that should have been bound already. */
  public static final String REASON_UNBOUND_IMMEDIATE = VolumeBinding.REASON_UNBOUND_IMMEDIATE;

  static final String ANN_BIND_COMPLETED = VolumeBinding.ANN_BIND_COMPLETED;

  /** The node a claim waiting for its first consumer is provisioned for (set at PreBind). */
  public static final String ANN_SELECTED_NODE = VolumeBinding.ANN_SELECTED_NODE;

  /** Nothing to check: the pod has no volume these plugins look at. */
  public static final VolumeFilters NONE =
      new VolumeFilters(null, null, null, null, null, List::of);

  /**
   * The PreFilter's answer: a refusal for every node, or the filters for each node.
   *
   * @param refusal the reason, in upstream's words, or the field this scheduler cannot honour
   * @param unsupported whether the refusal is ours (a volume this scheduler cannot model)
   */
  public record PreFiltered(String refusal, boolean unsupported, VolumeFilters filters) {
    /** A refusal; its filters reject every node with it. */
    static PreFiltered refused(String why, boolean unsupported) {
      return new PreFiltered(
          why, unsupported, new VolumeFilters(why, null, null, null, null, List::of));
    }

    public Optional<String> refused() {
      return Optional.ofNullable(refusal);
    }
  }

  /** The refusal every node gets (null: none); used only when the plugins are absent. */
  private final String refusal;

  // null in NONE and in a refusal's filters
  private final VolumeRestrictions restrictions;
  private final NodeVolumeLimits limits;
  private final VolumeBinding binding;
  private final VolumeZone zone;

  private final Supplier<Collection<Pod>> placed;
  private Map<String, List<Pod>> podsByNode;

  private VolumeFilters(
      String refusal,
      VolumeRestrictions restrictions,
      NodeVolumeLimits limits,
      VolumeBinding binding,
      VolumeZone zone,
      Supplier<Collection<Pod>> placed) {
    this.refusal = refusal;
    this.restrictions = restrictions;
    this.limits = limits;
    this.binding = binding;
    this.zone = zone;
    this.placed = placed;
  }

  /** Whether the pod has a volume these filters look at (else {@link #NONE} applies). */
  public static boolean concerns(Pod pod) {
    for (Volume v : VolumeHelpers.volumes(pod)) {
      if (v.getPersistentVolumeClaim() != null
          || v.getEphemeral() != null
          || VolumeRestrictions.isInlineDisk(v)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The PreFilters of the four plugins, in order; the first refusal wins, as upstream's framework
   * stops at the first PreFilter that fails. NodeVolumeLimits refuses nothing at PreFilter.
   *
   * @param placed the pods bound or being bound to a node, not terminal, not the pod
   */
  public static PreFiltered prefilter(
      Pod pod, VolumeObjects objects, Supplier<Collection<Pod>> placed) {
    if (!concerns(pod)) {
      return new PreFiltered(null, false, NONE);
    }
    PreFilterStatus<VolumeRestrictions> restrictions =
        VolumeRestrictions.prefilter(pod, objects, placed);
    if (restrictions.refusal() != null) {
      return refusedBy(restrictions);
    }
    PreFilterStatus<VolumeBinding> binding = VolumeBinding.prefilter(pod, objects);
    if (binding.refusal() != null) {
      return refusedBy(binding);
    }
    PreFilterStatus<VolumeZone> zone = VolumeZone.prefilter(pod, objects);
    if (zone.refusal() != null) {
      return refusedBy(zone);
    }
    return new PreFiltered(
        null,
        false,
        new VolumeFilters(
            null,
            restrictions.state(),
            new NodeVolumeLimits(pod, objects),
            binding.state(),
            zone.state(),
            placed));
  }

  private static PreFiltered refusedBy(PreFilterStatus<?> status) {
    return PreFiltered.refused(status.refusal(), status.unsupported());
  }

  /**
   * What VolumeBinding's PreBind does on {@code node} for the pod's claims that wait for their
   * first consumer: the existing volumes they are bound to, and those provisioned there (each gets
   * the {@value #ANN_SELECTED_NODE} annotation); the pod is bound once they are. Nothing for a node
   * the filters reject.
   */
  public PodVolumes volumesOn(Node node) {
    if (binding == null || reject(node).isPresent()) {
      return PodVolumes.NONE;
    }
    return binding.decide(node).volumes();
  }

  /** Whether the pod has claims that wait for their first consumer (VolumeBinding scores them). */
  boolean bindsOrProvisions() {
    return binding != null && binding.waitsForFirstConsumer();
  }

  /** The node's verdict, the first failing plugin's reason; empty: it passes. */
  public Optional<String> reject(Node node) {
    if (restrictions == null) {
      return Optional.ofNullable(refusal);
    }
    List<Pod> onNode = podsOn(node);
    return restrictions
        .reject(onNode)
        .or(() -> limits.reject(node, onNode))
        .or(() -> binding.reject(node))
        .or(() -> zone.reject(node));
  }

  /** The placed pods on {@code node}, grouped once per attempt when first asked. */
  private List<Pod> podsOn(Node node) {
    if (podsByNode == null) {
      podsByNode = new HashMap<>();
      for (Pod p : placed.get()) {
        podsByNode.computeIfAbsent(p.getSpec().getNodeName(), n -> new ArrayList<>()).add(p);
      }
    }
    return podsByNode.getOrDefault(node.getMetadata().getName(), List.of());
  }

  /** The claim a volume uses: its {@code claimName}, or {@code <pod>-<volume>} when ephemeral. */
  public static String claimName(Pod pod, Volume v) {
    return VolumeHelpers.claimName(pod, v);
  }

  /** The claims the pod's volumes use, in order (without repeats). */
  public static List<String> claimNames(Pod pod) {
    return VolumeHelpers.claimNames(pod);
  }
}
