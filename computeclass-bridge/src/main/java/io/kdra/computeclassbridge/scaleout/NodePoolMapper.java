package io.kdra.computeclassbridge.scaleout;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.kdra.computeclassbridge.mapping.Labels;
import io.kdra.computeclassbridge.mapping.PriorityNote;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The scale-out decision: ComputeClass -> Karpenter NodePools ({@code karpenter.sh/v1}), one per
 * priority that names an accelerator, so that Karpenter launches machines in the ComputeClass's
 * order. A pure function: equal inputs give equal NodePools.
 *
 * <ul>
 *   <li>Weights follow the priorities: the first NodePool gets {@value #FIRST_WEIGHT}, each next
 *       one less. Karpenter tries the NodePool of highest weight first and the next one when that
 *       cannot launch (no capacity, or the pod does not fit), which is GKE's fallback.
 *   <li>Requirements: {@code node.kubernetes.io/instance-type} in the configured instance types
 *       with exactly the priority's accelerator and count (GKE's {@code gpu.count} is per node),
 *       and {@code karpenter.sh/capacity-type} {@code spot} when the priority says {@code spot:
 *       true}, else {@code on-demand}.
 *   <li>A NodePool is named after the ComputeClass and what its machines have, not after the
 *       priority's position, so reordering priorities only changes weights: deleting a NodePool
 *       would make Karpenter drain its nodes.
 *   <li>{@code whenUnsatisfiable: ScaleUpAnyway} adds a last NodePool, weight {@value
 *       #ANYWAY_WEIGHT}, without accelerator requirements; {@code DoNotScaleUp} (the current CRD
 *       schema's default) and no value add none.
 *   <li>Nodes are labelled {@value #COMPUTE_CLASS_NODE_LABEL}, GKE's label, so that pods selecting
 *       it land on them.
 * </ul>
 */
public final class NodePoolMapper {

  public static final String API_VERSION = "karpenter.sh/v1";
  public static final String KIND = "NodePool";
  public static final int FIRST_WEIGHT = 100;
  public static final int ANYWAY_WEIGHT = 1;
  public static final String COMPUTE_CLASS_NODE_LABEL = "cloud.google.com/compute-class";
  public static final String INSTANCE_TYPE = "node.kubernetes.io/instance-type";
  public static final String CAPACITY_TYPE = "karpenter.sh/capacity-type";

  private final ScaleOutSettings settings;

  public NodePoolMapper(ScaleOutSettings settings) {
    this.settings = settings;
  }

  /** The NodePools of one ComputeClass; it needs metadata name and uid. */
  public NodePoolPlan plan(ComputeClass cc) {
    List<Priority> priorities = cc.getSpec() == null ? List.of() : cc.getSpec().getPriorities();
    Map<String, GenericKubernetesResource> byName = new LinkedHashMap<>();
    Map<String, Integer> firstByName = new LinkedHashMap<>();
    List<PriorityNote> skipped = new ArrayList<>();
    List<PriorityNote> problems = new ArrayList<>();
    for (int i = 0; i < priorities.size(); i++) {
      Priority p = priorities.get(i);
      String where = "spec.priorities[" + i + "]";
      Machines m = machines(p);
      if (m == null) {
        skipped.add(new PriorityNote(i, where + ": no gpu or tpu, no NodePool of its own"));
        continue;
      }
      String name = name(cc, m);
      Integer earlier = firstByName.putIfAbsent(name, i);
      if (earlier != null) {
        skipped.add(
            new PriorityNote(i, where + ": the same machines as spec.priorities[" + earlier + "]"));
        continue;
      }
      List<String> types = settings.instanceTypesOf(m.accelerator, m.count);
      if (types.isEmpty()) {
        problems.add(
            new PriorityNote(
                i,
                where
                    + ": no instance type has "
                    + m.count
                    + " x "
                    + m.accelerator
                    + " (kdra.computeclass-bridge.scale-out.instance-types), so no node can be created for it"));
        continue;
      }
      int weight = FIRST_WEIGHT - byName.size();
      byName.put(
          name,
          nodePool(
              cc,
              name,
              weight,
              List.of(
                  requirement(INSTANCE_TYPE, types),
                  requirement(CAPACITY_TYPE, List.of(m.spot ? "spot" : "on-demand")))));
    }
    if (scaleUpAnyway(cc)) {
      String name = Labels.value(cc.getMetadata().getName() + "-anyway");
      byName.put(
          name,
          nodePool(
              cc, name, ANYWAY_WEIGHT, List.of(requirement(CAPACITY_TYPE, List.of("on-demand")))));
    }
    List<GenericKubernetesResource> sorted =
        byName.values().stream()
            .sorted(Comparator.comparing(r -> r.getMetadata().getName()))
            .toList();
    return new NodePoolPlan(sorted, skipped, problems);
  }

  private record Machines(String accelerator, int count, boolean spot) {}

  private static Machines machines(Priority p) {
    boolean spot = Boolean.TRUE.equals(p.getAdditional().get("spot"));
    if (p.getGpu() != null && p.getGpu().getType() != null) {
      return new Machines(p.getGpu().getType(), count(p.getGpu().getCount()), spot);
    }
    if (p.getTpu() != null && p.getTpu().getType() != null) {
      return new Machines(p.getTpu().getType(), count(p.getTpu().getCount()), spot);
    }
    return null;
  }

  private static int count(Integer count) {
    return count == null ? 1 : count;
  }

  private static boolean scaleUpAnyway(ComputeClass cc) {
    return cc.getSpec() != null
        && "ScaleUpAnyway".equals(cc.getSpec().getAdditional().get("whenUnsatisfiable"));
  }

  /** {@code <computeclass>-nvidia-l4-x2}, {@code -spot} added for spot: a node label value. */
  static String name(ComputeClass cc, Machines m) {
    return Labels.value(
        cc.getMetadata().getName()
            + "-"
            + m.accelerator
            + "-x"
            + m.count
            + (m.spot ? "-spot" : ""));
  }

  private GenericKubernetesResource nodePool(
      ComputeClass cc, String name, int weight, List<Map<String, Object>> requirements) {
    Map<String, Object> nodeClassRef = new LinkedHashMap<>();
    nodeClassRef.put("group", settings.nodeClassGroup());
    nodeClassRef.put("kind", settings.nodeClassKind());
    nodeClassRef.put("name", settings.nodeClassName());
    Map<String, Object> templateSpec = new LinkedHashMap<>();
    templateSpec.put("nodeClassRef", nodeClassRef);
    templateSpec.put("requirements", requirements);
    Map<String, Object> template = new LinkedHashMap<>();
    template.put(
        "metadata",
        Map.of(
            "labels", Map.of(COMPUTE_CLASS_NODE_LABEL, Labels.value(cc.getMetadata().getName()))));
    template.put("spec", templateSpec);
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("weight", weight);
    spec.put("template", template);
    return new GenericKubernetesResourceBuilder()
        .withApiVersion(API_VERSION)
        .withKind(KIND)
        .withNewMetadata()
        .withName(name)
        .withLabels(Labels.templatesOf(cc.getMetadata().getName()))
        .withOwnerReferences(ownerReference(cc))
        .endMetadata()
        .withAdditionalProperties(Map.of("spec", spec))
        .build();
  }

  private static Map<String, Object> requirement(String key, List<String> values) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("key", key);
    r.put("operator", "In");
    r.put("values", values);
    return r;
  }

  /** Not a controller reference, as for the bridge's other objects; the GC removes them. */
  private static OwnerReference ownerReference(ComputeClass cc) {
    return new OwnerReferenceBuilder()
        .withApiVersion(cc.getApiVersion())
        .withKind(cc.getKind())
        .withName(cc.getMetadata().getName())
        .withUid(cc.getMetadata().getUid())
        .build();
  }
}
