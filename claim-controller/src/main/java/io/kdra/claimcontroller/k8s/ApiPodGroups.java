package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.claimcontroller.domain.GroupPreemption;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * PodGroups read from the API server, one GET per read: fabric8 7.5 has no model for them (generic
 * resources). The scheduler reads them so only where no PodGroup informer runs, the server not
 * serving the API at start (it is off by default in 1.37), else from the informer's cache ({@link
 * CachedPodGroups}); only pods that name a group ({@code spec.schedulingGroup}, which the API
 * server keeps only with the {@code GenericWorkload} gate on) cause a read. Status writes always
 * come here.
 */
public final class ApiPodGroups implements PodGroups {

  /**
   * PodGroups by their plural: no discovery request before each read (nor a failure where the API
   * is not served: the read itself is then a 404).
   */
  public static final ResourceDefinitionContext CONTEXT =
      new ResourceDefinitionContext.Builder()
          .withGroup("scheduling.k8s.io")
          .withVersion("v1beta1")
          .withPlural("podgroups")
          .withKind("PodGroup")
          .withNamespaced(true)
          .build();

  /** Conflicts retried per condition write before the caller's own handling. */
  private static final int CONFLICT_RETRIES = 3;

  private final KubernetesClient client;
  private final Clock clock;

  public ApiPodGroups(KubernetesClient client) {
    this(client, Clock.systemUTC());
  }

  public ApiPodGroups(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  @Override
  public Optional<PodGroupPolicy> get(String namespace, String name) {
    GenericKubernetesResource g;
    try {
      g = client.genericKubernetesResources(CONTEXT).inNamespace(namespace).withName(name).get();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return Optional.empty(); // the API is not served
      }
      throw e;
    }
    if (g == null || g.getMetadata().getDeletionTimestamp() != null) {
      return Optional.empty();
    }
    return Optional.of(policyOf(g));
  }

  /** What the scheduler reads of a PodGroup as the API server or an informer gives it. */
  @SuppressWarnings("unchecked")
  public static PodGroupPolicy policyOf(GenericKubernetesResource g) {
    Map<String, Object> spec = (Map<String, Object>) g.getAdditionalProperties().get("spec");
    Map<String, Object> status = (Map<String, Object>) g.getAdditionalProperties().get("status");
    return PodGroupPolicy.parse(g.getMetadata().getName(), g.getMetadata().getUid(), spec, status);
  }

  /**
   * Sets the group's {@code DisruptionTarget} condition ({@link GroupPreemption}): a JSON patch of
   * the status's conditions, the others as read, that carries the read resourceVersion, retried on
   * a conflict. Nothing when the group is gone.
   */
  @Override
  public void recordPreemption(String namespace, String name, String preemptorUid, String node) {
    patchConditions(
        namespace,
        name,
        conditions ->
            Optional.of(
                GroupPreemption.conditionsWith(conditions, preemptorUid, node, clock.instant())));
  }

  /**
   * Sets the group's {@code DisruptionTarget} condition back to False ({@link
   * GroupPreemption#conditionsPlacedAgain}) as {@link #recordPreemption} sets it: decided on each
   * read, so nothing is written when another preemption recorded itself since.
   */
  @Override
  public void recordPlacedAgain(String namespace, String name, String preemptorUid, int members) {
    patchConditions(
        namespace,
        name,
        conditions ->
            GroupPreemption.conditionsPlacedAgain(
                conditions, preemptorUid, members, clock.instant()));
  }

  /**
   * Replaces the group's status conditions with those {@code decide} makes of the ones read (none:
   * nothing to write), by a JSON patch that carries the read resourceVersion, so that the API
   * server refuses it if the group changed since; re-read and decided again on a conflict.
   */
  private void patchConditions(
      String namespace,
      String name,
      Function<List<Map<String, Object>>, Optional<List<Map<String, Object>>>> decide) {
    Conflicts.retry(
        CONFLICT_RETRIES,
        () -> {
          GenericKubernetesResource g =
              client
                  .genericKubernetesResources(CONTEXT)
                  .inNamespace(namespace)
                  .withName(name)
                  .get();
          if (g == null) {
            return false;
          }
          @SuppressWarnings("unchecked")
          Map<String, Object> status =
              (Map<String, Object>) g.getAdditionalProperties().get("status");
          Optional<List<Map<String, Object>>> conditions =
              decide.apply(GroupPreemption.conditions(status));
          if (conditions.isEmpty()) {
            return false;
          }
          List<Map<String, Object>> ops = new ArrayList<>();
          ops.add(JsonPatchOps.onResourceVersion(g.getMetadata().getResourceVersion()));
          ops.add(
              status == null
                  ? Map.of(
                      "op",
                      "add",
                      "path",
                      "/status",
                      "value",
                      Map.of("conditions", conditions.get()))
                  : Map.of("op", "add", "path", "/status/conditions", "value", conditions.get()));
          return Conflicts.unlessGone(
              () ->
                  client
                      .genericKubernetesResources(CONTEXT)
                      .inNamespace(namespace)
                      .withName(name)
                      .subresource("status")
                      .patch(PatchContext.of(PatchType.JSON), Serialization.asJson(ops)));
        });
  }

  /**
   * Whether PodGroup {@code namespace/name} with {@code uid} is gone or replaced: a GET, 404 (also
   * where the API is not served) meaning gone. A group being deleted still exists, as upstream's
   * lister has it.
   */
  @Override
  public boolean gone(String namespace, String name, String uid) {
    GenericKubernetesResource g;
    try {
      g = client.genericKubernetesResources(CONTEXT).inNamespace(namespace).withName(name).get();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return true;
      }
      throw e;
    }
    return g == null || !uid.equals(g.getMetadata().getUid());
  }

  /**
   * The field manager of this controller's status applies: its own, not kube-controller-manager's
   * ({@code ResourceClaimController}), which writes the same field when it creates the claims.
   */
  public static final String FIELD_MANAGER = "kdra-resourceclaim-controller";

  @Override
  public void recordClaims(String namespace, String name, Map<String, String> statuses) {
    List<Map<String, Object>> list = new ArrayList<>();
    statuses.forEach((entry, claim) -> list.add(Map.of("name", entry, "resourceClaimName", claim)));
    Map<String, Object> apply = new LinkedHashMap<>();
    apply.put("apiVersion", PodGroupPolicy.API_VERSION);
    apply.put("kind", "PodGroup");
    apply.put("metadata", Map.of("name", name, "namespace", namespace));
    apply.put("status", Map.of("resourceClaimStatuses", list));
    client
        .genericKubernetesResources(CONTEXT)
        .inNamespace(namespace)
        .withName(name)
        .subresource("status")
        .patch(
            new PatchContext.Builder()
                .withPatchType(PatchType.SERVER_SIDE_APPLY)
                .withFieldManager(FIELD_MANAGER)
                .withForce(true)
                .build(),
            Serialization.asJson(apply));
  }
}
