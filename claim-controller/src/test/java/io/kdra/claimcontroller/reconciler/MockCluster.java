package io.kdra.claimcontroller.reconciler;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.claimcontroller.domain.K;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import java.time.Duration;

/** The cluster steps the operator tests take against the fabric8 mock API server (crud mode). */
final class MockCluster {

  private MockCluster() {}

  static void readyNode(KubernetesClient client, String name) {
    client.nodes().resource(K.readyNode(name)).createOr(n -> n.update());
  }

  /**
   * Template {@code ns/<template>} whose one request asks for a class that does not exist: a pod of
   * it is unschedulable and retried with backoff.
   */
  static void templateOfMissingClass(
      KubernetesClient client, String template, String missingClass) {
    var t = K.template(template);
    t.getSpec()
        .getSpec()
        .getDevices()
        .getRequests()
        .get(0)
        .getExactly()
        .setDeviceClassName(missingClass);
    client.resource(t).createOr(existing -> existing.update());
  }

  /** Deletes the pod without grace and waits until the API server has no pod of its name. */
  static void deleteAndAwaitGone(KubernetesClient client, Pod pod) {
    client.resource(pod).withGracePeriod(0).delete();
    String name = pod.getMetadata().getName();
    await()
        .atMost(Duration.ofMinutes(1))
        .until(() -> client.pods().inNamespace(NS).withName(name).get() == null);
  }

  /**
   * Refuses the next write of {@code ns/<pod>}'s status with a conflict, as an API server refuses a
   * deleted pod's late status write once a pod of the same name exists (the crud mock would apply
   * it to the new pod).
   */
  static void refuseNextStatusWrite(KubernetesServer server, String pod) {
    server
        .expect()
        .put()
        .withPath("/api/v1/namespaces/" + NS + "/pods/" + pod + "/status")
        .andReturn(
            409,
            new StatusBuilder()
                .withCode(409)
                .withReason("Conflict")
                .withMessage("the object has been modified")
                .build())
        .once();
  }
}
