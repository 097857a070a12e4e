package io.kdra.events;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Objects;
import org.jboss.logging.Logger;

/**
 * Writes core/v1 Events about the objects a service acts on, as {@code kubectl describe} shows
 * them. Events of a cluster-scoped object (a ComputeClass) live in the {@code default} namespace,
 * where {@code kubectl describe} looks for them. Best effort: a failed Event is logged and never
 * fails a reconciliation.
 */
public class EventRecorder {

  private static final Logger LOG = Logger.getLogger(EventRecorder.class);

  /** The API server refuses longer messages. */
  static final int MAX_MESSAGE = 1024;

  static final String CLUSTER_SCOPED_NAMESPACE = "default";

  private final KubernetesClient client;
  private final String component;
  private final Clock clock;

  /**
   * @param component the Event's source and reporting component (kube-scheduler's say {@code
   *     default-scheduler} there)
   */
  public EventRecorder(KubernetesClient client, String component, Clock clock) {
    this.client = Objects.requireNonNull(client, "client");
    this.component = Objects.requireNonNull(component, "component");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  public void normal(HasMetadata about, String reason, String message) {
    record(about, "Normal", reason, message);
  }

  public void warning(HasMetadata about, String reason, String message) {
    record(about, "Warning", reason, message);
  }

  private void record(HasMetadata about, String type, String reason, String message) {
    String namespace =
        about.getMetadata().getNamespace() != null
            ? about.getMetadata().getNamespace()
            : CLUSTER_SCOPED_NAMESPACE;
    // Event times are RFC 3339 in whole seconds
    String now = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    String text =
        message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE - 3) + "...";
    Event event =
        new EventBuilder()
            .withNewMetadata()
            .withGenerateName(about.getMetadata().getName() + ".")
            .withNamespace(namespace)
            .endMetadata()
            .withNewInvolvedObject()
            .withApiVersion(about.getApiVersion())
            .withKind(about.getKind())
            .withNamespace(about.getMetadata().getNamespace())
            .withName(about.getMetadata().getName())
            .withUid(about.getMetadata().getUid())
            .withResourceVersion(about.getMetadata().getResourceVersion())
            .endInvolvedObject()
            .withType(type)
            .withReason(reason)
            .withMessage(text)
            .withNewSource()
            .withComponent(component)
            .endSource()
            .withReportingComponent(component)
            .withFirstTimestamp(now)
            .withLastTimestamp(now)
            .withCount(1)
            .build();
    try {
      client.v1().events().inNamespace(namespace).resource(event).create();
    } catch (KubernetesClientException e) {
      LOG.warnf(
          "could not record %s event %s on %s %s: %s",
          type.toLowerCase(Locale.ROOT),
          reason,
          about.getKind(),
          about.getMetadata().getName(),
          e.getMessage());
    }
  }
}
