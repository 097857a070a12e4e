package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.EventHandler;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * Retries unschedulable pods when a placed pod goes away ({@link PodTriggers#forPodChange}): the
 * pod informer's events reach only the pod they are about, so a pod waiting for a host port, an
 * anti-affinity domain or room on a node would otherwise wait for its backoff.
 */
final class PlacedPodDepartures extends AbstractEventSource<Pod, Pod> {

  PlacedPodDepartures(
      SharedInformer<Pod> pods, BiFunction<Pod, Boolean, Set<ResourceID>> toPrimaries) {
    super(Pod.class, "placed-pod-departures");
    pods.subscribe(
        (p, deleted) -> {
          EventHandler handler = getEventHandler();
          if (handler == null) {
            return; // not registered yet: every pod is reconciled once at the start anyway
          }
          for (ResourceID id : toPrimaries.apply(p, deleted)) {
            handler.handleEvent(new Event(id));
          }
        });
  }

  /** Nothing is read through the context. */
  @Override
  public Set<Pod> getSecondaryResources(Pod primary) {
    return Set.of();
  }
}
