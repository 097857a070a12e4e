package io.kdra.it.sched;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One gang question: a cluster (nodes, their ResourceSlices, DeviceClasses, claims as
 * kube-controller-manager made them from templates, pods already bound) and one PodGroup with its
 * pending members: can the group be placed whole now, and which of its members.
 *
 * @param name identifies the scenario in reports (seed and index)
 * @param pods every pod: bound ones ({@code spec.nodeName}) and the group's pending members
 * @param podGroup the PodGroup ({@code scheduling.k8s.io/v1beta1}), namespace {@link #NAMESPACE}
 * @param trigger the pending member whose attempt runs our gang pass (any would do: the pass
 *     decides all of them)
 */
public record GangScenario(
    String name,
    List<Node> nodes,
    List<ResourceSlice> slices,
    List<DeviceClass> classes,
    List<ResourceClaimTemplate> templates,
    List<ResourceClaim> claims,
    List<Pod> pods,
    GenericKubernetesResource podGroup,
    Pod trigger) {

  public static final String NAMESPACE = "default";

  /** The JSON line {@code dra-alloc-upstream gang} reads, asking for {@code runs} cycles. */
  public String toJsonLine(int runs) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", name);
    m.put("runs", runs);
    m.put("group", podGroup.getMetadata().getName());
    m.put("nodes", nodes);
    m.put("slices", slices);
    m.put("classes", classes);
    m.put("templates", templates);
    m.put("claims", claims);
    m.put("pods", pods);
    m.put("podGroups", List.of(podGroup));
    m.put("namespaces", List.of(Map.of("metadata", Map.of("name", NAMESPACE))));
    return Serialization.asJson(m).replace('\n', ' ');
  }
}
