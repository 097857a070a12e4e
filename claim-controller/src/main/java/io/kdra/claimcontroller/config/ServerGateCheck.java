package io.kdra.claimcontroller.config;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.domain.SchedulerFeatures;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.GateSkew;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Says once at start-up which feature gates the API server has on and this controller's allocator
 * or scheduler ({@link SchedulerFeatures}) has off (kube-scheduler runs with the cluster's gates;
 * ours decide alike only when they match). Reads the API server's {@code /metrics} off the start-up
 * thread: an API server that is slow to answer delays nothing.
 */
@ApplicationScoped
public class ServerGateCheck {

  private static final Logger LOG = Logger.getLogger(ServerGateCheck.class);

  /** What to log: a WARN for gates that differ, else an INFO why nothing was compared. */
  record Finding(boolean warn, String message) {}

  void onStart(
      @Observes StartupEvent started,
      KubernetesClient client,
      AllocatorFeatures features,
      SchedulerFeatures scheduler) {
    Thread check =
        new Thread(
            () ->
                finding(() -> client.raw("/metrics"), features, scheduler)
                    .ifPresent(ServerGateCheck::log),
            "server-gate-check");
    check.setDaemon(true);
    check.start();
  }

  private static void log(Finding f) {
    if (f.warn()) {
      LOG.warn(f.message());
    } else {
      LOG.info(f.message());
    }
  }

  /** The finding for the API server's metrics ({@code null}: it serves none); empty: all agree. */
  static Optional<Finding> finding(
      Supplier<String> metrics, AllocatorFeatures features, SchedulerFeatures scheduler) {
    String text;
    try {
      text = metrics.get();
    } catch (RuntimeException e) {
      return Optional.of(
          new Finding(
              false,
              "cannot read the API server's feature gates from /metrics ("
                  + e.getMessage()
                  + "): not compared with this allocator's"));
    }
    if (text == null) {
      return Optional.of(
          new Finding(
              false,
              "the API server serves no /metrics: its feature gates are not compared with this"
                  + " allocator's"));
    }
    Map<String, Boolean> server = GateSkew.parseMetrics(text);
    List<String> warnings = new ArrayList<>();
    GateSkew.warning(server, features).ifPresent(warnings::add);
    List<String> skewed =
        GateSkew.skewed(server, SchedulerFeatures.GATES, scheduler.enabledNames());
    if (!skewed.isEmpty()) {
      // the API server keeps PodGroups' topology constraints, which this scheduler then ignores
      warnings.add(
          "feature gates on in the API server but off in this controller's scheduler"
              + " (kdra.claim-controller.feature-gates): "
              + String.join(", ", skewed)
              + " (set them as kube-scheduler has them)");
    }
    return warnings.isEmpty()
        ? Optional.empty()
        : Optional.of(new Finding(true, String.join("; ", warnings)));
  }
}
