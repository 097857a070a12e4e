package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the phase tests share: {@link PodScheduling} end to end against the fabric8 mock API server
 * (CRUD mode, with resourceVersion conflicts), one node, and a fake allocator with two devices.
 * Each subclass tests one phase's rules through the whole attempt.
 */
@EnableKubernetesMockClient(crud = true)
abstract class SchedulingFixture {

  KubernetesClient client;
  KubernetesMockServer server;
  ApiView view;
  FakeAllocator allocator;
  ClaimWriter claims;
  PodWriter pods;
  PodScheduling scheduling;

  /** Binds as the API server would: sets spec.nodeName. */
  final PodBinder binder =
      (pod, node) ->
          client
              .pods()
              .inNamespace(NS)
              .withName(pod.getMetadata().getName())
              .edit(p -> new PodBuilder(p).editSpec().withNodeName(node).endSpec().build());

  @BeforeEach
  void setUp() {
    view = new ApiView(client);
    allocator = new FakeAllocator(2);
    claims = new ClaimWriter(client, K.SCHEDULER, 3);
    pods = new PodWriter(client, 3, Clock.systemUTC());
    scheduling = newScheduling(TemplateMode.OWN);
    client.nodes().resource(K.readyNode("node-a")).create();
  }

  PodScheduling newScheduling(TemplateMode mode) {
    return newScheduling(mode, ClaimTracer.NOOP);
  }

  PodScheduling newScheduling(TemplateMode mode, RecentWrites recent) {
    return new PodScheduling(
        view,
        recent,
        new PodScheduling.Writers(
            claims, pods, binder, new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
        allocator,
        PodScheduling.Settings.of(mode, ClaimTracer.NOOP));
  }

  PodScheduling newScheduling(TemplateMode mode, ClaimTracer tracer) {
    return new PodScheduling(
        view,
        new RecentWrites(),
        new PodScheduling.Writers(
            claims, pods, binder, new EventRecorder(client, K.SCHEDULER, Clock.systemUTC())),
        allocator,
        PodScheduling.Settings.of(mode, tracer));
  }

  Pod create(Pod pod) {
    return client.resource(pod).create();
  }

  Pod get(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }

  List<ResourceClaim> allClaims() {
    return client.resources(ResourceClaim.class).inNamespace(NS).list().getItems();
  }

  ResourceClaim claim(String name) {
    return client.resources(ResourceClaim.class).inNamespace(NS).withName(name).get();
  }

  /** A scheduler whose client does not retry a failed request itself, as after its retries. */
  PodScheduling newSchedulingWithoutRequestRetries(RecentWrites recent) {
    KubernetesClient once =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(client.getConfiguration())
                    .withRequestRetryBackoffLimit(0)
                    .build())
            .build();
    claims = new ClaimWriter(once, K.SCHEDULER, 3);
    return newScheduling(TemplateMode.OWN, recent);
  }

  /** The next status write of claim {@code name} gets 503 and is not applied. */
  void failNextStatusWrite(String name) {
    server
        .expect()
        .put()
        .withPath(
            "/apis/resource.k8s.io/v1/namespaces/" + K.NS + "/resourceclaims/" + name + "/status")
        .andReturn(
            503,
            new StatusBuilder()
                .withCode(503)
                .withMessage("the API server is shutting down")
                .withReason("ServiceUnavailable")
                .build())
        .once();
  }
}
