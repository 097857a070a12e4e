package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.KubernetesTestServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The catalog ConfigMap: its changes reach existing ComputeClasses without a restart. Also runs the
 * bridge with a namespace list only ({@code kdra.computeclass-bridge.namespaces.selector=none}).
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
@TestProfile(CatalogConfigMapTest.WithCatalogMap.class)
class CatalogConfigMapTest {

  /** Names the ConfigMap and a fixed namespace list, without selection by label. */
  public static class WithCatalogMap implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "kdra.computeclass-bridge.catalog.config-map",
          "catalog",
          "kdra.computeclass-bridge.catalog.config-map-namespace",
          "kdra-system",
          "kdra.computeclass-bridge.namespaces.names",
          "team-x",
          "kdra.computeclass-bridge.namespaces.selector",
          "none");
    }
  }

  @Inject KubernetesClient client;

  @KubernetesTestServer KubernetesServer server;

  @Test
  void anOverrideAddsATypeAndABrokenOneDegrades() {
    for (String ns : new String[] {"team-x", "kdra-system"}) {
      client
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
    }
    client
        .resource(
            computeClass("next", Priority.gpu("nvidia-next", 1), Priority.gpu("nvidia-l4", 1)))
        .create();
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(degraded().getReason()).isEqualTo("PrioritiesNotMapped"));

    catalog("accelerators:\n  nvidia-next:\n    kind: gpu\n    names: [\"NVIDIA Next\"]\n");
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () -> {
              assertThat(degraded().getStatus()).isEqualTo("False");
              assertThat(
                      client
                          .resources(DeviceClass.class)
                          .withName("nvidia-next.computeclass.kdra.io")
                          .get())
                  .isNotNull();
              assertThat(
                      client
                          .resources(ResourceClaimTemplate.class)
                          .inNamespace("team-x")
                          .withName("next")
                          .get()
                          .getSpec()
                          .getSpec()
                          .getDevices()
                          .getRequests()
                          .get(0)
                          .getFirstAvailable())
                  .extracting(s -> s.getName())
                  .containsExactly("nvidia-next-x1", "nvidia-l4-x1");
            });

    catalog("accelerators: [\n");
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () -> {
              assertThat(degraded().getReason()).isEqualTo("CatalogInvalid");
              assertThat(degraded().getMessage())
                  .startsWith("catalog override ignored: not a valid catalog");
            });
  }

  /**
   * The bridge reads its one ConfigMap by name (a metadata.name field selector on list and watch),
   * which is what lets the chart grant list and watch on that name only, not on every ConfigMap of
   * the namespace.
   */
  @Test
  void theCatalogIsListedAndWatchedByNameOnly() throws InterruptedException {
    List<String> paths = new ArrayList<>();
    for (var r = server.getKubernetesMockServer().takeRequest(1, TimeUnit.SECONDS);
        r != null;
        r = server.getKubernetesMockServer().takeRequest(100, TimeUnit.MILLISECONDS)) {
      if (r.getMethod().equals("GET")) {
        paths.add(r.getPath());
      }
    }
    // lists and watches of the collection (the test's own writes name the ConfigMap)
    assertThat(paths)
        .filteredOn(p -> p.contains("/configmaps?") || p.endsWith("/configmaps"))
        .isNotEmpty()
        .allSatisfy(
            p ->
                assertThat(p)
                    .startsWith("/api/v1/namespaces/kdra-system/configmaps")
                    .contains("fieldSelector=metadata.name%3Dcatalog"));
  }

  private void catalog(String yaml) {
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("catalog")
                .withNamespace("kdra-system")
                .endMetadata()
                .addToData("accelerators.yaml", yaml)
                .build())
        .createOr(op -> op.update());
  }

  private Condition degraded() {
    ComputeClass cc = client.resources(ComputeClass.class).withName("next").get();
    assertThat(cc.getStatus()).isNotNull();
    return cc.getStatus().getConditions().stream()
        .filter(c -> "Degraded".equals(c.getType()))
        .findFirst()
        .orElseThrow();
  }
}
