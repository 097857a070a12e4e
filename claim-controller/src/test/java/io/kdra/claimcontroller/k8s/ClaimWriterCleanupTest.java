package io.kdra.claimcontroller.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kdra.claimcontroller.domain.K;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A claim deleted by someone else (kube-controller-manager's resourceclaim controller, the garbage
 * collector) between this controller's read and its write: nothing is left to do, and that is no
 * error.
 */
@EnableKubernetesMockClient
class ClaimWriterCleanupTest {

  static final String CLAIM = "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c";

  KubernetesClient client;
  KubernetesMockServer server;

  @Test
  void aClaimGoneBeforeItsStatusIsWrittenIsNothingLeftToDo() {
    Pod gone = K.pod("web").build();
    server
        .expect()
        .get()
        .withPath(CLAIM)
        .andReturn(200, K.allocated(K.claim("c"), gone).build())
        .always();
    server
        .expect()
        .put()
        .withPath(CLAIM + "/status")
        .andReturn(404, new StatusBuilder().withCode(404).withReason("NotFound").build())
        .always();

    assertThat(
            new ClaimWriter(client, "dra-claim-controller", 3)
                .cleanup("ns", "c", (namespace, name) -> Optional.empty()))
        .isNull();
  }
}
