package io.kdra.slicepublisher.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** TokenReview answers as the API server gives them, from the mock server's expectations. */
@EnableKubernetesMockClient
class KubernetesTokenReviewerTest {

  private static final String PATH = "/apis/authentication.k8s.io/v1/tokenreviews";

  KubernetesMockServer server;
  KubernetesClient client;

  private KubernetesTokenReviewer reviewer() {
    return new KubernetesTokenReviewer(
        client, new DriverIdentity(Set.of("kdra:driver"), "kdra-slice-publisher"));
  }

  private void answer(boolean authenticated, String user, Map<String, List<String>> extra) {
    TokenReview review =
        new TokenReviewBuilder()
            .withNewStatus()
            .withAuthenticated(authenticated)
            .withAudiences("kdra-slice-publisher")
            .withNewUser()
            .withUsername(user)
            .withExtra(extra)
            .endUser()
            .endStatus()
            .build();
    server.expect().post().withPath(PATH).andReturn(201, review).once();
  }

  @Test
  void theNodeComesFromTheTokensExtraInfo() throws Exception {
    answer(
        true,
        "system:serviceaccount:kdra:driver",
        Map.of(
            KubernetesTokenReviewer.POD_NAME,
            List.of("driver-x"),
            KubernetesTokenReviewer.NODE_NAME,
            List.of("node-a")));
    assertThat(reviewer().nodeOf("t")).isEqualTo("node-a");
    // the review asks for the publisher's audience, not the API server's
    TokenReview sent =
        Serialization.unmarshal(server.getLastRequest().getBody().readUtf8(), TokenReview.class);
    assertThat(sent.getSpec().getAudiences()).containsExactly("kdra-slice-publisher");
  }

  @Test
  void olderClustersNameOnlyThePodWhoseNodeIsLookedUp() throws Exception {
    answer(
        true,
        "system:serviceaccount:kdra:driver",
        Map.of(KubernetesTokenReviewer.POD_NAME, List.of("driver-x")));
    server
        .expect()
        .get()
        .withPath("/api/v1/namespaces/kdra/pods/driver-x")
        .andReturn(
            200,
            new PodBuilder()
                .withNewMetadata()
                .withName("driver-x")
                .endMetadata()
                .withNewSpec()
                .withNodeName("node-b")
                .endSpec()
                .build())
        .once();
    assertThat(reviewer().nodeOf("t")).isEqualTo("node-b");
  }

  @Test
  void unauthenticatedAndUnboundTokensAreRejected() {
    answer(false, null, Map.of());
    assertThatThrownBy(() -> reviewer().nodeOf("t"))
        .isInstanceOf(TokenReviewer.Rejected.class)
        .hasMessageContaining("not authenticated");
    answer(true, "system:serviceaccount:kdra:driver", Map.of());
    assertThatThrownBy(() -> reviewer().nodeOf("t"))
        .isInstanceOf(TokenReviewer.Rejected.class)
        .hasMessageContaining("not bound to a pod");
  }
}
