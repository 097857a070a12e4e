package io.kdra.it;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.WorkloadApi;
import io.kdra.it.services.Dra;
import java.util.List;
import java.util.Map;

/** Gangs as the soak makes them: PodGroups with a gang policy and pods that name them. */
final class GangMembers {

  private GangMembers() {}

  /** Whether the test control plane serves the Workload API. */
  static boolean served() {
    return WorkloadApi.servedBy(ControlPlane.VERSION);
  }

  static NonNamespaceOperation<
          GenericKubernetesResource,
          GenericKubernetesResourceList,
          Resource<GenericKubernetesResource>>
      podGroups(KubernetesClient client, String ns) {
    MixedOperation<
            GenericKubernetesResource,
            GenericKubernetesResourceList,
            Resource<GenericKubernetesResource>>
        all = client.genericKubernetesResources("scheduling.k8s.io/v1beta1", "PodGroup");
    return all.inNamespace(ns);
  }

  /** A PodGroup with a gang policy: all of {@code minCount} pods or none. */
  static GenericKubernetesResource podGroup(String ns, String name, int minCount) {
    return new GenericKubernetesResourceBuilder()
        .withApiVersion("scheduling.k8s.io/v1beta1")
        .withKind("PodGroup")
        .withNewMetadata()
        .withNamespace(ns)
        .withName(name)
        .endMetadata()
        .addToAdditionalProperties(
            "spec", Map.of("schedulingPolicy", Map.of("gang", Map.of("minCount", minCount))))
        .build();
  }

  /** Pod {@code <group>-<i>} of PodGroup {@code group}, its claim from {@code template}. */
  static Pod member(String ns, String group, int i, String template) {
    Pod p = Dra.podWithTemplate(ns, group + "-" + i, template);
    p.getSpec().setAdditionalProperty("schedulingGroup", Map.of("podGroupName", group));
    return p;
  }

  /** The PodGroup a pod names, or null. */
  static String groupOf(Pod p) {
    return p.getSpec().getAdditionalProperties().get("schedulingGroup") instanceof Map<?, ?> g
            && g.get("podGroupName") instanceof String name
        ? name
        : null;
  }

  /** The pods among {@code pods} that name {@code group}. */
  static List<Pod> of(List<Pod> pods, String group) {
    return pods.stream().filter(p -> group.equals(groupOf(p))).toList();
  }

  /** A PodGroup's {@code spec.schedulingPolicy.gang.minCount}; 0 without a gang policy. */
  static int minCount(GenericKubernetesResource group) {
    return group.get("spec", "schedulingPolicy", "gang", "minCount") instanceof Number n
        ? n.intValue()
        : 0;
  }
}
