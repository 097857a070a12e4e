package io.kdra.devicedriver.prepare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ListMetaBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimList;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimListBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kdra.devicedriver.testing.ClaimFixture;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Finding claims by UID: every page of one consistent list, or no answer at all. */
@EnableKubernetesMockClient
class KubernetesClaimReaderTest {
  private static final String LIST = "/apis/resource.k8s.io/v1/resourceclaims";

  KubernetesMockServer server;
  KubernetesClient client;

  private static ResourceClaimList page(String next, ClaimFixture... claims) {
    ResourceClaimListBuilder list =
        new ResourceClaimListBuilder()
            .withMetadata(new ListMetaBuilder().withContinue(next).build());
    for (ClaimFixture c : claims) {
      list.addToItems(c.build());
    }
    return list.build();
  }

  @Test
  void findsClaimsByUidOverEveryPageOfOneList() throws Exception {
    server
        .expect()
        .get()
        .withPath(LIST + "?limit=500")
        .andReturn(200, page("p2", ClaimFixture.claim("a").uid("ua")))
        .once();
    server
        .expect()
        .get()
        .withPath(LIST + "?continue=p2&limit=500")
        .andReturn(
            200,
            page(
                null,
                ClaimFixture.claim("b").namespace("team").uid("ub"),
                ClaimFixture.claim("c").uid("uc")))
        .once();

    var found = new KubernetesClaimReader(client).findByUid(Set.of("ub", "ua", "gone"));

    assertThat(found).containsOnlyKeys("ua", "ub");
    assertThat(found.get("ub").getMetadata().getNamespace()).isEqualTo("team");
    var first = server.takeRequest(5, TimeUnit.SECONDS);
    assertThat(first.getPath())
        .as("a consistent read: no resourceVersion")
        .isEqualTo(LIST + "?limit=500");
    assertThat(server.takeRequest(5, TimeUnit.SECONDS).getPath()).contains("continue=p2");
  }

  /** An expired continue token ends the list: a partial one would prove claims gone that exist. */
  @Test
  void aListNotReadWholeIsAnError() {
    server
        .expect()
        .get()
        .withPath(LIST + "?limit=500")
        .andReturn(200, page("p2", ClaimFixture.claim("a").uid("ua")))
        .once();
    server
        .expect()
        .get()
        .withPath(LIST + "?continue=p2&limit=500")
        .andReturn(410, new StatusBuilder().withCode(410).withReason("Expired").build())
        .once();

    assertThatThrownBy(() -> new KubernetesClaimReader(client).findByUid(Set.of("ub")))
        .isInstanceOf(ClaimReader.ClaimReadException.class)
        .hasMessageContaining("listing resourceclaims failed: HTTP 410");
  }
}
