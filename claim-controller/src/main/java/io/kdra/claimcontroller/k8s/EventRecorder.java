package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;

/**
 * The shared recorder ({@code kube-events}) under the name the scheduling and reconciler classes
 * import; it adds nothing, and goes once they import the shared one.
 */
public class EventRecorder extends io.kdra.events.EventRecorder {

  public EventRecorder(KubernetesClient client, String component, Clock clock) {
    super(client, component, clock);
  }
}
