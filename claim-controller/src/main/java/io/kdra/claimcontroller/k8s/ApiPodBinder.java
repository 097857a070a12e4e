package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Binds through the {@code pods/binding} subresource, as kube-scheduler does, so the RBAC a
 * scheduler needs ({@code create} on {@code pods/binding}) is all it takes. The binding carries the
 * pod's UID as a precondition, so a pod replaced under the same name is never bound by mistake.
 */
public class ApiPodBinder implements PodBinder {

  private final KubernetesClient client;

  public ApiPodBinder(KubernetesClient client) {
    this.client = client;
  }

  /** The Binding object posted for {@code pod} and {@code node}. */
  public static Binding binding(Pod pod, String node) {
    return new BindingBuilder()
        .withNewMetadata()
        .withName(pod.getMetadata().getName())
        .withNamespace(pod.getMetadata().getNamespace())
        .withUid(pod.getMetadata().getUid())
        .endMetadata()
        .withNewTarget()
        .withApiVersion("v1")
        .withKind("Node")
        .withName(node)
        .endTarget()
        .build();
  }

  @Override
  public void bind(Pod pod, String node) {
    String path =
        "/api/v1/namespaces/"
            + pod.getMetadata().getNamespace()
            + "/pods/"
            + pod.getMetadata().getName()
            + "/binding";
    try {
      // raw() answers null for 404 instead of throwing: the pod is gone.
      if (client.raw(path, "POST", binding(pod, node)) == null) {
        throw new KubernetesClientException(
            "pod " + pod.getMetadata().getName() + " not found", 404, null);
      }
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 && boundTo(pod, node)) {
        return; // bound by an earlier attempt whose answer was lost
      }
      throw e;
    }
  }

  private boolean boundTo(Pod pod, String node) {
    Pod now =
        client
            .pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(pod.getMetadata().getName())
            .get();
    return now != null && node.equals(now.getSpec().getNodeName());
  }
}
