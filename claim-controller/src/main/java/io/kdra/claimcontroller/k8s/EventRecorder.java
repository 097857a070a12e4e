package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Instant;
import org.jboss.logging.Logger;

/**
 * Writes core/v1 Events about pods and claims, as {@code kubectl describe} shows them. Best
 * effort: a failed Event is logged, never fails a reconciliation.
 */
public class EventRecorder {

  private static final Logger LOG = Logger.getLogger(EventRecorder.class);
  /** Event source component; kube-scheduler's Events say "default-scheduler" here. */
  private final String component;
  private final KubernetesClient client;
  private final Clock clock;

  public EventRecorder(KubernetesClient client, String component, Clock clock) {
    this.client = client;
    this.component = component;
    this.clock = clock;
  }

  public void normal(HasMetadata about, String reason, String message) {
    record(about, "Normal", reason, message);
  }

  public void warning(HasMetadata about, String reason, String message) {
    record(about, "Warning", reason, message);
  }

  private void record(HasMetadata about, String type, String reason, String message) {
    String ts = Instant.now(clock).toString();
    var event = new EventBuilder()
        .withNewMetadata()
        .withGenerateName(about.getMetadata().getName() + ".")
        .withNamespace(about.getMetadata().getNamespace())
        .endMetadata()
        .withInvolvedObject(new ObjectReferenceBuilder()
            .withApiVersion(about.getApiVersion()).withKind(about.getKind())
            .withNamespace(about.getMetadata().getNamespace())
            .withName(about.getMetadata().getName()).withUid(about.getMetadata().getUid())
            .withResourceVersion(about.getMetadata().getResourceVersion()).build())
        .withType(type).withReason(reason)
        // Event messages are limited to 1 KiB by the API server.
        .withMessage(message.length() > 1024 ? message.substring(0, 1021) + "..." : message)
        .withNewSource().withComponent(component).endSource()
        .withReportingComponent(component)
        .withFirstTimestamp(ts).withLastTimestamp(ts).withCount(1)
        .build();
    try {
      client.v1().events().inNamespace(about.getMetadata().getNamespace()).resource(event)
          .create();
    } catch (KubernetesClientException e) {
      LOG.debugf(e, "could not record event %s on %s", reason, about.getMetadata().getName());
    }
  }
}
