package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.GroupVersionKind;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kdra.claimcontroller.domain.PodGroupEvents;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ApiPodGroups;
import io.kdra.claimcontroller.k8s.CachedPodGroups;
import io.kdra.claimcontroller.k8s.PodGroups;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * The PodGroup informer ({@code scheduling.k8s.io/v1beta1}, Kubernetes 1.37's Workload API, off by
 * default): a group created or changed after its pods brings its pending members back, as
 * upstream's gangscheduling plugin registers PodGroup events. Started only where the API server
 * serves the kind, since an informer on a resource it does not serve would never sync.
 */
final class PodGroupInformers {

  private static final Logger LOG = Logger.getLogger(PodGroupInformers.class);

  private PodGroupInformers() {}

  static boolean served(KubernetesClient client) {
    try {
      return client.supports(PodGroupPolicy.API_VERSION, "PodGroup");
    } catch (RuntimeException e) {
      LOG.warnf("cannot tell whether PodGroups are served (%s): not watching them", e);
      return false;
    }
  }

  /**
   * Where the scheduler reads PodGroups: the informer's {@code cache} (null where the API is not
   * served, and no informer runs), the API server otherwise; writes always go to the API server.
   */
  static PodGroups reads(Cache<GenericKubernetesResource> cache, KubernetesClient client) {
    ApiPodGroups api = new ApiPodGroups(client);
    return cache == null ? api : new CachedPodGroups(cache, api);
  }

  /**
   * Added: its members; updated: its members when {@link PodGroupEvents} says so; deleted: none.
   */
  static InformerEventSource<GenericKubernetesResource, Pod> eventSource(
      EventSourceContext<Pod> ctx, PodTriggers wake, TemplateMode mode) {
    return new InformerEventSource<>(
        InformerEventSourceConfiguration.from(
                new GroupVersionKind("scheduling.k8s.io", "v1beta1", "PodGroup"), Pod.class)
            .withSecondaryToPrimaryMapper(
                g -> wake.forPodGroup(g.getMetadata().getNamespace(), g.getMetadata().getName()))
            .withOnUpdateFilter(
                (now, old) ->
                    PodGroupEvents.wakesOnUpdate(
                        ApiPodGroups.policyOf(old), ApiPodGroups.policyOf(now), mode))
            .withOnDeleteFilter((g, unknown) -> false)
            .withPrimaryToSecondaryMapper(p -> Set.of())
            .build(),
        ctx);
  }
}
