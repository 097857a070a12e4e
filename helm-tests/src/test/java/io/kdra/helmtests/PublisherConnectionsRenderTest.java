package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Service;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Drivers reach the leading publisher through the Service only if each new connection is routed
 * afresh: no session affinity, and connection limits that can be set from values.
 */
class PublisherConnectionsRenderTest {

  @Test
  void theInventoryServiceRoutesEveryNewConnectionAfresh() {
    Service s = Rendered.one(Chart.render(Map.of()), Service.class, "kdra-slice-publisher");
    // ClientIP would send a driver back to the standby that refused it
    assertThat(s.getSpec().getSessionAffinity()).isEqualTo("None");
  }

  @Test
  void theConnectionLimitsAreSetFromValues() {
    Map<String, Object> values =
        Map.of(
            "slicePublisher",
            Map.of(
                "config",
                Map.of(
                    "inventory-connections",
                    Map.of("max-age", "10m", "max-age-grace", "20s", "max-idle", "2s"))));
    assertThat(Rendered.properties(Chart.render(values), "kdra-slice-publisher"))
        .containsEntry("kdra.slice-publisher.inventory-connections.max-age", "10m")
        .containsEntry("kdra.slice-publisher.inventory-connections.max-age-grace", "20s")
        .containsEntry("kdra.slice-publisher.inventory-connections.max-idle", "2s");
  }

  @Test
  void byDefaultTheServicesOwnLimitsApply() {
    assertThat(Rendered.properties(Chart.render(Map.of()), "kdra-slice-publisher").keySet())
        .noneMatch(k -> k.toString().startsWith("kdra.slice-publisher.inventory-connections."));
  }
}
