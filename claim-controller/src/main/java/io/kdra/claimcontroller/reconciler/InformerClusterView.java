package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kdra.claimcontroller.scheduling.ClusterView;
import java.util.List;
import java.util.Optional;

/** {@link ClusterView} over the pod controller's primary cache and its informer event sources. */
final class InformerClusterView implements ClusterView {

  private final IndexerResourceCache<Pod> pods;
  private final InformerEventSource<ResourceClaim, Pod> claims;
  private final InformerEventSource<ResourceClaimTemplate, Pod> templates;
  private final InformerEventSource<Node, Pod> nodes;
  private final InformerEventSource<ResourceSlice, Pod> slices;
  private final InformerEventSource<DeviceClass, Pod> classes;

  InformerClusterView(IndexerResourceCache<Pod> pods,
      InformerEventSource<ResourceClaim, Pod> claims,
      InformerEventSource<ResourceClaimTemplate, Pod> templates,
      InformerEventSource<Node, Pod> nodes, InformerEventSource<ResourceSlice, Pod> slices,
      InformerEventSource<DeviceClass, Pod> classes) {
    this.pods = pods;
    this.claims = claims;
    this.templates = templates;
    this.nodes = nodes;
    this.slices = slices;
    this.classes = classes;
  }

  @Override
  public List<Node> nodes() {
    return nodes.list(n -> true).toList();
  }

  @Override
  public List<Pod> pods() {
    return pods.list(p -> true).toList();
  }

  @Override
  public List<ResourceClaim> claims() {
    return claims.list(c -> true).toList();
  }

  @Override
  public Optional<ResourceClaim> claim(String namespace, String name) {
    return claims.get(new ResourceID(name, namespace));
  }

  @Override
  public Optional<ResourceClaimTemplate> template(String namespace, String name) {
    return templates.get(new ResourceID(name, namespace));
  }

  @Override
  public List<ResourceSlice> slices() {
    return slices.list(s -> true).toList();
  }

  @Override
  public List<DeviceClass> deviceClasses() {
    return classes.list(c -> true).toList();
  }
}
