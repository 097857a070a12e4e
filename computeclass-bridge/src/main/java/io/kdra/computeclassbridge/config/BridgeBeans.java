package io.kdra.computeclassbridge.config;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.computeclassbridge.k8s.GeneratedObjects;
import io.kdra.computeclassbridge.k8s.NodePools;
import io.kdra.computeclassbridge.k8s.ScaleOut;
import io.kdra.computeclassbridge.mapping.ComputeClassMapper;
import io.kdra.computeclassbridge.mapping.MapperSettings;
import io.kdra.computeclassbridge.reconciler.CatalogSource;
import io.kdra.computeclassbridge.reconciler.ComputeClassReconciler;
import io.kdra.computeclassbridge.reconciler.NamespaceSelection;
import io.kdra.computeclassbridge.reconciler.ReconcilerSettings;
import io.kdra.computeclassbridge.scaleout.InstanceType;
import io.kdra.computeclassbridge.scaleout.NodePoolMapper;
import io.kdra.computeclassbridge.scaleout.ScaleOutSettings;
import io.kdra.events.EventRecorder;
import io.opentelemetry.api.trace.Tracer;
import io.quarkus.arc.DefaultBean;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.util.List;
import java.util.Optional;

/**
 * Wires the reconciler's collaborators from the typed configuration, so that {@link
 * ComputeClassReconciler} only orchestrates and tests can replace single beans (the {@link Clock}
 * above all: every time the bridge writes, a condition's transition or an Event's timestamp, comes
 * from it; and {@link GeneratedObjects}, which a test holds mid-apply).
 */
@ApplicationScoped
public class BridgeBeans {

  /** The bridge's Events say this as their source. */
  static final String EVENT_SOURCE = "kdra-computeclass-bridge";

  @Produces
  @DefaultBean
  @Singleton
  Clock clock() {
    return Clock.systemUTC();
  }

  @Produces
  @DefaultBean
  @Singleton
  GeneratedObjects generatedObjects(KubernetesClient client, Tracer tracer) {
    return new GeneratedObjects(client, tracer);
  }

  @Produces
  @Singleton
  EventRecorder eventRecorder(KubernetesClient client, Clock clock) {
    return new EventRecorder(client, EVENT_SOURCE, clock);
  }

  @Produces
  @Singleton
  ComputeClassMapper mapper(BridgeConfig config) {
    return new ComputeClassMapper(
        new MapperSettings(config.deviceClassSuffix(), config.requestName()));
  }

  @Produces
  @Singleton
  ScaleOut scaleOut(BridgeConfig config, KubernetesClient client) {
    BridgeConfig.ScaleOut c = config.scaleOut();
    Optional<NodePoolMapper> mapper =
        c.enabled()
            ? Optional.of(
                new NodePoolMapper(
                    new ScaleOutSettings(
                        InstanceType.parse(c.instanceTypes().orElse(List.of())),
                        c.nodeClassGroup(),
                        c.nodeClassKind(),
                        c.nodeClassName())))
            : Optional.empty();
    return new ScaleOut(mapper, new NodePools(client));
  }

  @Produces
  @Singleton
  NamespaceSelection namespaceSelection(BridgeConfig config) {
    return new NamespaceSelection(
        config.namespaces().names().orElse(List.of()),
        Optional.of(config.namespaces().selector())
            .filter(s -> !BridgeConfig.Namespaces.NO_SELECTOR.equals(s)));
  }

  @Produces
  @Singleton
  CatalogSource catalogSource(BridgeConfig config) {
    return new CatalogSource(
        CatalogSource.shippedCatalog(), config.catalog().profiles(), config.catalog().drivers());
  }

  @Produces
  @Singleton
  ReconcilerSettings reconcilerSettings(BridgeConfig config) {
    return new ReconcilerSettings(
        config.catalog().configMap(),
        config.catalog().configMapNamespace(),
        config.catalog().configMapKey(),
        config.leaderElection().retryPeriod());
  }
}
