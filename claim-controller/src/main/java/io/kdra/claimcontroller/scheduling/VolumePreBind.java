package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.PodVolumes;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.VolumeFilters;
import io.kdra.claimcontroller.k8s.VolumeClaimWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * kube-scheduler's VolumeBinding PreBind for claims that wait for their first consumer, decided
 * again for the chosen node from the informers ({@link VolumeFilters#volumesOn}): each existing
 * volume chosen for a claim gets the claim in its {@code claimRef}, for the PV controller to bind
 * them; each claim to be provisioned gets the node in its {@value VolumeFilters#ANN_SELECTED_NODE}
 * annotation, for the external provisioner to create the volume there. The pod is bound only once
 * its claims are bound. Upstream holds the binding cycle until then (up to 10 minutes); here the
 * attempt ends {@link Outcome.Waiting}, and the claim's event brings the pod back: the annotation
 * then allows only that node, a volume pre-bound to the claim is its only match, and a claim bound
 * by then passes on to the ordinary checks of its volume. Writes carry the informer's {@code
 * resourceVersion}: a volume another pod took meanwhile answers 409, and the pod is tried again.
 */
final class VolumePreBind {

  private final ClusterView view;
  private final VolumeClaimWriter writer;
  private final BooleanSupplier mayWrite;

  VolumePreBind(ClusterView view, VolumeClaimWriter writer, BooleanSupplier mayWrite) {
    this.view = view;
    this.writer = writer;
    this.mayWrite = mayWrite;
  }

  /** Empty when every claim of the pod's volumes is bound; else why the pod is not bound yet. */
  Optional<Outcome> waitFor(Pod pod, String nodeName) {
    if (!VolumeFilters.concerns(pod)) {
      return Optional.empty();
    }
    Optional<Node> node =
        view.nodes().stream().filter(n -> nodeName.equals(n.getMetadata().getName())).findFirst();
    if (node.isEmpty()) {
      return Optional.of(new Outcome.Retry("node " + nodeName + " is gone"));
    }
    VolumeFilters.PreFiltered pre = VolumeFilters.prefilter(pod, view.volumes(), List::of);
    Optional<String> changed = pre.refused().or(() -> pre.filters().reject(node.get()));
    if (changed.isPresent()) {
      // the claims or volumes changed since the decision
      return Optional.of(new Outcome.Retry(changed.get()));
    }
    PodVolumes volumes = pre.filters().volumesOn(node.get());
    if (volumes.isEmpty()) {
      return Optional.empty();
    }
    try {
      for (PodVolumes.StaticBinding b : volumes.staticBindings()) {
        Optional<PersistentVolume> bound = b.boundVolume();
        if (bound.isEmpty()) {
          continue;
        }
        if (!mayWrite.getAsBoolean()) {
          return Optional.of(PodScheduling.FENCED);
        }
        if (!writer.bindVolume(bound.get())) {
          return Optional.of(
              new Outcome.Retry("PersistentVolume " + name(b.pv()) + " was deleted"));
        }
      }
      for (PodVolumes.DynamicProvision p : volumes.dynamicProvisions()) {
        if (!mayWrite.getAsBoolean()) {
          return Optional.of(PodScheduling.FENCED);
        }
        if (!writer.annotate(p.pvc(), VolumeFilters.ANN_SELECTED_NODE, nodeName)) {
          return Optional.of(
              new Outcome.Retry("PersistentVolumeClaim " + key(p.pvc()) + " was deleted"));
        }
      }
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      return Optional.of(
          new Outcome.Retry("a PersistentVolume or PersistentVolumeClaim of the pod changed"));
    }
    return Optional.of(new Outcome.Waiting(waiting(pod, nodeName, volumes)));
  }

  private static String waiting(Pod pod, String node, PodVolumes volumes) {
    List<String> parts = new ArrayList<>();
    for (PodVolumes.StaticBinding b : volumes.staticBindings()) {
      parts.add(
          "PersistentVolumeClaim "
              + key(b.pvc())
              + " to be bound to PersistentVolume "
              + name(b.pv()));
    }
    if (!volumes.dynamicProvisions().isEmpty()) {
      parts.add(
          "PersistentVolumeClaim(s) "
              + volumes.dynamicProvisions().stream()
                  .map(p -> key(p.pvc()))
                  .collect(Collectors.joining(", "))
              + " to be provisioned on node "
              + node
              + " and bound");
    }
    return "pod " + Pods.key(pod) + " waits for " + String.join("; ", parts);
  }

  private static String key(PersistentVolumeClaim pvc) {
    return pvc.getMetadata().getNamespace() + "/" + pvc.getMetadata().getName();
  }

  private static String name(PersistentVolume pv) {
    return pv.getMetadata().getName();
  }
}
