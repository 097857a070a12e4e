package io.kdra.devicedriver.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kdra.devicedriver.testing.ClaimFixture;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient
class KubernetesClaimStatusStoreTest {
  private static final String PATH =
      "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c/status";

  KubernetesMockServer server;
  KubernetesClient client;

  @Test
  void patchesOnlyStatusDevicesAtTheReadResourceVersion() throws Exception {
    ResourceClaim read = ClaimFixture.claim("c").result("a", "gpu-0").build();
    read.getMetadata().setResourceVersion("41");
    server.expect().patch().withPath(PATH).andReturn(200, read).once();
    AllocatedDeviceStatus s = new AllocatedDeviceStatus();
    s.setDriver("gpu.kdra.io");
    s.setPool("node-a");
    s.setDevice("gpu-0");

    new KubernetesClaimStatusStore(client).writeDevices(read, List.of(s));

    var request = server.takeRequest(5, TimeUnit.SECONDS);
    assertThat(request.getMethod()).isEqualTo("PATCH");
    assertThat(request.getPath()).isEqualTo(PATH);
    assertThat(request.getHeader("Content-Type")).startsWith("application/json-patch+json");
    assertThat(request.getBody().readUtf8())
        .isEqualTo(
            "[{\"op\":\"replace\",\"path\":\"/metadata/resourceVersion\",\"value\":\"41\"},"
                + "{\"op\":\"add\",\"path\":\"/status/devices\",\"value\":"
                + "[{\"device\":\"gpu-0\",\"driver\":\"gpu.kdra.io\",\"pool\":\"node-a\"}]}]");
  }

  @Test
  void aConflictIsAConflict() {
    ResourceClaim read = ClaimFixture.claim("c").result("a", "gpu-0").build();
    read.getMetadata().setResourceVersion("41");
    server
        .expect()
        .patch()
        .withPath(PATH)
        .andReturn(409, new StatusBuilder().withCode(409).withReason("Conflict").build())
        .once();
    assertThatThrownBy(() -> new KubernetesClaimStatusStore(client).writeDevices(read, List.of()))
        .isInstanceOf(ClaimStatusStore.Conflict.class);
  }
}
