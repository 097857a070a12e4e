package io.kdra.it.sched;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One scheduling question: the cluster (nodes, the pods already on them, namespaces, the volume
 * objects) and the pod to place.
 *
 * @param name identifies the scenario in reports (seed and index)
 * @param pods the pods already bound to nodes ({@code spec.nodeName} set)
 */
public record SchedulingScenario(
    String name,
    List<Node> nodes,
    List<Pod> pods,
    List<Namespace> namespaces,
    Pod pod,
    SchedulingVolumes volumes) {

  /** A scenario without volume objects. */
  public SchedulingScenario(
      String name, List<Node> nodes, List<Pod> pods, List<Namespace> namespaces, Pod pod) {
    this(name, nodes, pods, namespaces, pod, SchedulingVolumes.NONE);
  }

  /** The JSON line {@code dra-alloc-upstream filter} reads. */
  public String toJsonLine() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", name);
    m.put("nodes", nodes);
    m.put("pods", pods);
    m.put("namespaces", namespaces);
    m.put("pod", pod);
    m.put("pvcs", volumes.pvcs());
    m.put("pvs", volumes.pvs());
    m.put("storageClasses", volumes.storageClasses());
    m.put("csiNodes", volumes.csiNodes());
    m.put("csiDrivers", volumes.csiDrivers());
    m.put("csiStorageCapacities", volumes.capacities());
    return Serialization.asJson(m).replace('\n', ' ');
  }

  /** Namespace name to its labels (never null). */
  public Map<String, Map<String, String>> namespaceLabels() {
    Map<String, Map<String, String>> m = new LinkedHashMap<>();
    for (Namespace ns : namespaces) {
      Map<String, String> labels = ns.getMetadata().getLabels();
      m.put(ns.getMetadata().getName(), labels == null ? Map.of() : labels);
    }
    return m;
  }
}
