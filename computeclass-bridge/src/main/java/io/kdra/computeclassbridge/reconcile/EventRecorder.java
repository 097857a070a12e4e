package io.kdra.computeclassbridge.reconcile;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import org.jboss.logging.Logger;

/**
 * Records core/v1 Events about a ComputeClass. Events of cluster-scoped objects live in the
 * {@code default} namespace, where {@code kubectl describe computeclass} finds them. Best
 * effort: a failure to record is logged and never fails a reconcile.
 */
final class EventRecorder {

  static final String COMPONENT = "kdra-computeclass-bridge";
  private static final Logger LOG = Logger.getLogger(EventRecorder.class);
  private static final int MAX_MESSAGE = 1024;

  private final KubernetesClient client;
  private final Clock clock;

  EventRecorder(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  void normal(HasMetadata about, String reason, String message) {
    record(about, "Normal", reason, message);
  }

  void warning(HasMetadata about, String reason, String message) {
    record(about, "Warning", reason, message);
  }

  private void record(HasMetadata about, String type, String reason, String message) {
    String now = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    String text = message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE - 3) + "...";
    Event event = new EventBuilder()
        .withNewMetadata()
          .withGenerateName(about.getMetadata().getName() + ".")
          .withNamespace("default")
        .endMetadata()
        .withNewInvolvedObject()
          .withApiVersion(about.getApiVersion())
          .withKind(about.getKind())
          .withName(about.getMetadata().getName())
          .withUid(about.getMetadata().getUid())
          .withResourceVersion(about.getMetadata().getResourceVersion())
        .endInvolvedObject()
        .withType(type)
        .withReason(reason)
        .withMessage(text)
        .withNewSource().withComponent(COMPONENT).endSource()
        .withReportingComponent(COMPONENT)
        .withFirstTimestamp(now)
        .withLastTimestamp(now)
        .withCount(1)
        .build();
    try {
      client.v1().events().inNamespace("default").resource(event).create();
    } catch (KubernetesClientException e) {
      LOG.warnf("could not record %s event %s on %s %s: %s", type.toLowerCase(Locale.ROOT),
          reason, about.getKind(), about.getMetadata().getName(), e.getMessage());
    }
  }
}
