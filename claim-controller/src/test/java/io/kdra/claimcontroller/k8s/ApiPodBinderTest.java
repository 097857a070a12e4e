package io.kdra.claimcontroller.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.claimcontroller.domain.K;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The binding request kube-scheduler would send, and the idempotent retry after a lost answer. */
@EnableKubernetesMockClient
class ApiPodBinderTest {

  static final String PATH = "/api/v1/namespaces/ns/pods/web/binding";

  KubernetesClient client;
  KubernetesMockServer server;

  @Test
  void postsABindingWithThePodUidToTheBindingSubresource() throws Exception {
    Pod pod = K.pod("web").build();
    server.expect().post().withPath(PATH).andReturn(201, "{}").once();

    new ApiPodBinder(client).bind(pod, "node-a");

    var request = server.takeRequest(5, TimeUnit.SECONDS);
    assertThat(request.getPath()).isEqualTo(PATH);
    Binding sent = Serialization.unmarshal(request.getBody().readUtf8(), Binding.class);
    assertThat(sent.getMetadata().getName()).isEqualTo("web");
    assertThat(sent.getMetadata().getUid()).isEqualTo("uid-web");
    assertThat(sent.getTarget().getKind()).isEqualTo("Node");
    assertThat(sent.getTarget().getName()).isEqualTo("node-a");
  }

  @Test
  void conflictBecauseAlreadyBoundThereIsSuccess() {
    Pod pod = K.pod("web").build();
    server
        .expect()
        .post()
        .withPath(PATH)
        .andReturn(409, new StatusBuilder().withCode(409).withReason("Conflict").build())
        .always();
    server
        .expect()
        .get()
        .withPath("/api/v1/namespaces/ns/pods/web")
        .andReturn(200, K.pod("web").editSpec().withNodeName("node-a").endSpec().build())
        .always();

    new ApiPodBinder(client).bind(pod, "node-a");
    assertThatThrownBy(() -> new ApiPodBinder(client).bind(pod, "node-b"))
        .isInstanceOf(KubernetesClientException.class);
  }
}
