package io.kdra.computeclassbridge.k8s;

import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.kdra.computeclassbridge.mapping.JsonSubset;
import io.kdra.computeclassbridge.mapping.Labels;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.scaleout.NodePoolMapper;
import java.net.HttpURLConnection;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Makes one ComputeClass's Karpenter NodePools what {@link NodePoolMapper} says, as {@link
 * GeneratedObjects} does for its other objects: reads live state from the API server, creates what
 * is missing, updates what drifted and deletes what is no longer wanted, touching only NodePools
 * labelled as the bridge's. An update carries the resourceVersion it read, so a concurrent write
 * (Karpenter's own annotations, a hand edit, another replica) fails it with 409 and the reconcile
 * runs again on fresh state instead of overwriting.
 */
public final class NodePools {

  static final ResourceDefinitionContext NODE_POOLS =
      new ResourceDefinitionContext.Builder()
          .withGroup("karpenter.sh")
          .withVersion("v1")
          .withKind(NodePoolMapper.KIND)
          .withPlural("nodepools")
          .withNamespaced(false)
          .build();

  private final KubernetesClient client;
  private volatile boolean seenServed;

  public NodePools(KubernetesClient client) {
    this.client = client;
  }

  /**
   * Whether the API server serves {@code karpenter.sh/v1} NodePools. Asked again until the answer
   * is yes, so that installing Karpenter after the bridge turns scale-out on without a restart.
   */
  public boolean served() {
    if (seenServed) {
      return true;
    }
    try {
      APIResourceList list = client.getApiResources(NodePoolMapper.API_VERSION);
      seenServed =
          list != null
              && list.getResources().stream().anyMatch(r -> "nodepools".equals(r.getName()));
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_NOT_FOUND) {
        throw e;
      }
    }
    return seenServed;
  }

  /** The desired set of this ComputeClass's NodePools; empty deletes them all. */
  public ApplyReport apply(ComputeClass cc, List<GenericKubernetesResource> desired) {
    Map<String, GenericKubernetesResource> actual = new TreeMap<>();
    client
        .genericKubernetesResources(NODE_POOLS)
        .withLabels(Labels.templatesOf(cc.getMetadata().getName()))
        .list()
        .getItems()
        .forEach(np -> actual.put(np.getMetadata().getName(), np));
    List<String> changes = new ArrayList<>();
    List<String> conflicts = new ArrayList<>();
    for (GenericKubernetesResource d : desired) {
      GenericKubernetesResource a = actual.remove(d.getMetadata().getName());
      if (a == null) {
        create(d, changes, conflicts);
      } else if (!JsonSubset.contains(a, d)) {
        client.genericKubernetesResources(NODE_POOLS).resource(updated(a, d)).update();
        changes.add("updated " + describe(d));
      }
    }
    for (GenericKubernetesResource leftover : actual.values()) {
      client.genericKubernetesResources(NODE_POOLS).resource(leftover).delete();
      changes.add("deleted " + describe(leftover));
    }
    return ApplyReport.of(changes, conflicts);
  }

  /**
   * The live object with the desired spec, labels and owners, and the live resourceVersion: what
   * others added (Karpenter's annotations, server defaults the desired spec leaves out are filled
   * in again) stays.
   */
  static GenericKubernetesResource updated(
      GenericKubernetesResource actual, GenericKubernetesResource desired) {
    Map<String, String> labels = new LinkedHashMap<>();
    if (actual.getMetadata().getLabels() != null) {
      labels.putAll(actual.getMetadata().getLabels());
    }
    labels.putAll(desired.getMetadata().getLabels());
    return new GenericKubernetesResourceBuilder(actual)
        .editMetadata()
        .withLabels(labels)
        .withOwnerReferences(desired.getMetadata().getOwnerReferences())
        .endMetadata()
        .addToAdditionalProperties("spec", desired.getAdditionalProperties().get("spec"))
        .build();
  }

  private void create(GenericKubernetesResource d, List<String> changes, List<String> conflicts) {
    try {
      client.genericKubernetesResources(NODE_POOLS).resource(d).create();
      changes.add("created " + describe(d));
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
      GenericKubernetesResource existing =
          client.genericKubernetesResources(NODE_POOLS).withName(d.getMetadata().getName()).get();
      Map<String, String> labels =
          existing == null || existing.getMetadata().getLabels() == null
              ? Map.of()
              : existing.getMetadata().getLabels();
      if (existing != null && !Labels.MANAGER.equals(labels.get(Labels.MANAGED_BY))) {
        conflicts.add(
            describe(d) + " already exists and was not generated by the bridge; left as it is");
      } else {
        throw e; // ours, created concurrently (or by the same ComputeClass under another label)
      }
    }
  }

  private static String describe(GenericKubernetesResource np) {
    return "NodePool " + np.getMetadata().getName();
  }
}
