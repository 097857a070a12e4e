package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The chart's Pod Security levels, as the real kube-apiserver's PodSecurity admission judges them:
 * a server-side dry run of each workload's pod, as its template makes it, into a namespace that
 * enforces a level. Every controller the chart renders (slice-publisher, claim-controller and the
 * computeclass-bridge, which is off by default and so not in {@code ChartDefaultsMultiNodeIT}'s
 * installation) is admitted at {@code restricted}; the device-driver is refused at {@code baseline}
 * (host paths), which also shows that the API server enforces the levels. Only the API server: no
 * service runs, nothing is created.
 */
@ExtendWith(ControlPlane.class)
class ChartPodSecurityIT {

  private static final String RESTRICTED = "pod-security-restricted";
  private static final String BASELINE = "pod-security-baseline";

  private static KubernetesClient client;

  @BeforeAll
  static void namespacesEnforcingEachLevel(KubernetesClient kubernetes) {
    client = kubernetes;
    for (Map.Entry<String, String> ns :
        Map.of(RESTRICTED, "restricted", BASELINE, "baseline").entrySet()) {
      client
          .namespaces()
          .resource(
              new NamespaceBuilder()
                  .withNewMetadata()
                  .withName(ns.getKey())
                  .addToLabels("pod-security.kubernetes.io/enforce", ns.getValue())
                  .endMetadata()
                  .build())
          .serverSideApply();
      // no kube-controller-manager here to make it, and ServiceAccount admission wants it
      client
          .serviceAccounts()
          .inNamespace(ns.getKey())
          .resource(
              new ServiceAccountBuilder()
                  .withNewMetadata()
                  .withName("default")
                  .withNamespace(ns.getKey())
                  .endMetadata()
                  .build())
          .serverSideApply();
    }
  }

  @Test
  void everyControllerTheChartRendersPassesRestricted() {
    Map<String, PodTemplateSpec> controllers =
        KdraChart.render().stream()
            .filter(Deployment.class::isInstance)
            .map(Deployment.class::cast)
            .collect(
                Collectors.toMap(d -> component(d), d -> d.getSpec().getTemplate(), (a, b) -> a));
    assertThat(controllers)
        .containsOnlyKeys(KdraChart.PUBLISHER, KdraChart.CONTROLLER, KdraChart.BRIDGE);
    controllers.forEach(
        (name, template) -> {
          KubernetesClientException refused =
              catchThrowableOfType(
                  KubernetesClientException.class,
                  () ->
                      client
                          .pods()
                          .inNamespace(RESTRICTED)
                          .resource(podOf(template, name))
                          .dryRun()
                          .create());
          assertThat(refused)
              .as("the %s's pod in a restricted namespace: %s", name, message(refused))
              .isNull();
        });
  }

  @Test
  void theDriverNeedsMoreThanBaseline() {
    DaemonSet driver =
        KdraChart.render().stream()
            .filter(DaemonSet.class::isInstance)
            .map(DaemonSet.class::cast)
            .filter(d -> KdraChart.DRIVER.equals(component(d)))
            .findFirst()
            .orElseThrow();
    KubernetesClientException refused =
        catchThrowableOfType(
            KubernetesClientException.class,
            () ->
                client
                    .pods()
                    .inNamespace(BASELINE)
                    .resource(podOf(driver.getSpec().getTemplate(), KdraChart.DRIVER))
                    .dryRun()
                    .create());
    assertThat(refused).as("the driver's pod in a baseline namespace").isNotNull();
    assertThat(refused.getMessage())
        .contains("violates PodSecurity \"baseline:latest\"")
        .contains("hostPath");
  }

  private static String component(HasMetadata workload) {
    return workload.getMetadata().getLabels().get("app.kubernetes.io/component");
  }

  private static String message(KubernetesClientException e) {
    return e == null ? "admitted" : e.getMessage();
  }

  /**
   * A pod as {@code template} makes it, under the namespace's {@code default} ServiceAccount (the
   * release's are not there; Pod Security does not look at it).
   */
  private static Pod podOf(PodTemplateSpec template, String name) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withLabels(template.getMetadata().getLabels())
        .endMetadata()
        .withSpec(new PodSpecBuilder(template.getSpec()).withServiceAccountName("default").build())
        .build();
  }
}
