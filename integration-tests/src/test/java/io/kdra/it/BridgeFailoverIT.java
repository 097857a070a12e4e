package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.nodes.NodeRegistration;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two computeclass-bridge replicas electing a leader through the Lease (issue #9: "leader election
 * on, two replicas allowed"). The leader is killed (SIGKILL): the standby takes the Lease once it
 * expires and reconciles what changes next. The killed replica comes back as a standby; then the
 * new leader is stopped gracefully (SIGTERM): it releases the Lease and the other takes over at its
 * next retry. Throughout, each ComputeClass has exactly one template and its status follows its
 * generation. Last, a replica started on a Lease written by hand (a holder, no times) takes it,
 * leads and reconciles.
 */
@ExtendWith(ControlPlane.class)
class BridgeFailoverIT {

  static final String LEASE = KdraChart.BRIDGE_LEASE;
  static final String ONE = "computeclass-bridge-1";
  static final String TWO = "computeclass-bridge-2";
  static final String NAME = "computeclass.kdra.io/name";

  private static final ResourceDefinitionContext COMPUTE_CLASS =
      new ResourceDefinitionContext.Builder()
          .withGroup("cloud.google.com")
          .withVersion("v1")
          .withKind("ComputeClass")
          .withPlural("computeclasses")
          .withNamespaced(false)
          .build();

  /**
   * The bridge's reconciles and the operator SDK's event handling at DEBUG in the services' logs: a
   * takeover once left a ComputeClass edit unreconciled without a word at INFO (the SDK dropped the
   * edit's event behind its own status patch), and a next failure must show which event went.
   */
  @RegisterExtension
  static final KdraStack STACK =
      KdraStack.nodes()
          .withBridges(2)
          .withProperties(
              Map.of(
                  "quarkus.log.category.\"io.kdra.computeclassbridge.reconciler\".level",
                  "DEBUG",
                  "quarkus.log.category.\"io.javaoperatorsdk.operator.processing.event\".level",
                  "DEBUG"));

  private static Stack stack;
  private static KubernetesClient client;

  @BeforeAll
  static void leaderElected() {
    stack = STACK.get();
    client = stack.client;
    await().atMost(Duration.ofSeconds(60)).until(() -> leader() != null);
  }

  @AfterAll
  static void deleteComputeClasses() {
    // while a bridge still runs, so that its finalizer lets them go
    if (client != null) {
      for (String cc : List.of("failover-l4", "failover-a100")) {
        client.genericKubernetesResources(COMPUTE_CLASS).withName(cc).delete();
      }
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  client.genericKubernetesResources(COMPUTE_CLASS).withName("failover-l4").get()
                          == null
                      && client
                              .genericKubernetesResources(COMPUTE_CLASS)
                              .withName("failover-a100")
                              .get()
                          == null);
    }
  }

  @Test
  void theStandbyTakesOverOnACrashAndOnAShutdownWithoutDuplicates() throws Exception {
    String first = leader();
    assertThat(first).isIn(ONE, TWO);
    String second = first.equals(ONE) ? TWO : ONE;
    // both ready (the standby too: its caches are warm), only one says it leads
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(leadership(first).path("leader").asBoolean()).isTrue();
              assertThat(leadership(second).path("leader").asBoolean()).isFalse();
              assertThat(leadership(second).path("leaseHolder").asText()).isEqualTo(first);
            });

    apply("failover-l4", "- gpu: {type: nvidia-l4, count: 1}");
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> assertThat(alternatives("failover-l4")).containsExactly("nvidia-l4-x1"));

    // the leader crashes: the standby waits for the lease to expire, then reconciles
    long crashed = System.nanoTime();
    stack.services.crash(first);
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> second.equals(leader()));
    long takeover = (System.nanoTime() - crashed) / 1_000_000;
    apply(
        "failover-l4",
        "- gpu: {type: nvidia-tesla-a100, count: 1}\n" + "    - gpu: {type: nvidia-l4, count: 1}");
    apply("failover-a100", "- gpu: {type: nvidia-tesla-a100, count: 1}");
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(alternatives("failover-l4"))
                  .containsExactly("nvidia-tesla-a100-x1", "nvidia-l4-x1");
              assertThat(alternatives("failover-a100")).containsExactly("nvidia-tesla-a100-x1");
              assertThat(readyForGeneration("failover-l4")).isTrue();
            });

    // the crashed replica comes back (as its Deployment would start it) and stands by
    stack.services.restart(first);
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> assertThat(leadership(first).path("leaseHolder").asText()).isEqualTo(second));
    assertThat(leader()).isEqualTo(second);

    // a graceful stop hands the Lease over instead of letting it expire
    long stopped = System.nanoTime();
    stack.services.stop(second);
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> first.equals(leader()));
    long handover = (System.nanoTime() - stopped) / 1_000_000;
    assertThat(Files.readString(stack.services.process(second).log)).contains("released Lease");
    client.genericKubernetesResources(COMPUTE_CLASS).withName("failover-a100").delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(templates("failover-a100")).isEmpty();
              assertThat(
                      client
                          .genericKubernetesResources(COMPUTE_CLASS)
                          .withName("failover-a100")
                          .get())
                  .isNull();
            });
    System.out.printf(
        "[it] bridge takeover after SIGKILL of the leader: %d ms; after SIGTERM"
            + " (Lease released): %d ms%n",
        takeover, handover);

    // one template per ComputeClass, and the shared DeviceClasses once each
    assertThat(templates("failover-l4")).hasSize(1);
    List<String> classes =
        client
            .resources(DeviceClass.class)
            .withLabel("app.kubernetes.io/managed-by", "kdra-computeclass-bridge")
            .list()
            .getItems()
            .stream()
            .map(c -> c.getMetadata().getName())
            .toList();
    assertThat(classes)
        .doesNotHaveDuplicates()
        .contains("nvidia-l4.computeclass.kdra.io", "nvidia-tesla-a100.computeclass.kdra.io");

    // a replica that starts on a Lease written by hand (a holder, no times: kubectl, a GitOps
    // tool, a chart) takes it and leads, as client-go would; the operator SDK's own election,
    // once the first one, gave up on such a Lease for good
    stack.services.crash(first);
    client.leases().inNamespace(KdraChart.NAMESPACE).withName(LEASE).delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> leader() == null);
    client
        .resource(
            new LeaseBuilder()
                .withNewMetadata()
                .withName(LEASE)
                .withNamespace(KdraChart.NAMESPACE)
                .endMetadata()
                .withNewSpec()
                .withHolderIdentity("gitops")
                .withLeaseDurationSeconds(15)
                .endSpec()
                .build())
        .create();
    stack.services.restart(first);
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(() -> assertThat(leadership(first).path("leader").asBoolean()).isTrue());
    assertThat(leader()).isEqualTo(first);
    apply("failover-l4", "- gpu: {type: nvidia-l4, count: 1}");
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(alternatives("failover-l4")).containsExactly("nvidia-l4-x1");
              assertThat(readyForGeneration("failover-l4")).isTrue();
            });
  }

  /** Creates or replaces a ComputeClass with these priorities (YAML list items). */
  private static void apply(String name, String priorities) {
    GenericKubernetesResource cc =
        Serialization.unmarshal(
            """
        apiVersion: cloud.google.com/v1
        kind: ComputeClass
        metadata:
          name: %s
        spec:
          priorities:
            %s
          whenUnsatisfiable: DoNotScaleUp
        """
                .formatted(name, priorities),
            GenericKubernetesResource.class);
    GenericKubernetesResource existing =
        client.genericKubernetesResources(COMPUTE_CLASS).withName(name).get();
    if (existing == null) {
      client.genericKubernetesResources(COMPUTE_CLASS).resource(cc).create();
    } else {
      // again on a conflict: the bridge writes the ComputeClass's status meanwhile
      NodeRegistration.onConflictRetry(
          () ->
              client
                  .genericKubernetesResources(COMPUTE_CLASS)
                  .withName(name)
                  .edit(
                      c -> {
                        c.setAdditionalProperty("spec", cc.getAdditionalProperties().get("spec"));
                        return c;
                      }));
    }
  }

  private static List<ResourceClaimTemplate> templates(String computeClass) {
    return client
        .resources(ResourceClaimTemplate.class)
        .inNamespace(stack.namespace)
        .withLabel(NAME, computeClass)
        .list()
        .getItems();
  }

  /** The subrequest names of the ComputeClass's template, or empty. */
  private static List<String> alternatives(String computeClass) {
    List<ResourceClaimTemplate> t = templates(computeClass);
    if (t.size() != 1) {
      return List.of();
    }
    return t
        .get(0)
        .getSpec()
        .getSpec()
        .getDevices()
        .getRequests()
        .get(0)
        .getFirstAvailable()
        .stream()
        .map(DeviceSubRequest::getName)
        .toList();
  }

  /** Whether the status's Ready condition is True for the current generation. */
  @SuppressWarnings("unchecked")
  private static boolean readyForGeneration(String name) {
    GenericKubernetesResource cc =
        client.genericKubernetesResources(COMPUTE_CLASS).withName(name).get();
    Object status = cc.getAdditionalProperties().get("status");
    if (!(status instanceof Map<?, ?> s) || !(s.get("conditions") instanceof List<?> conditions)) {
      return false;
    }
    return conditions.stream()
        .map(c -> (Map<String, Object>) c)
        .anyMatch(
            c ->
                "Ready".equals(c.get("type"))
                    && "True".equals(c.get("status"))
                    && cc.getMetadata()
                        .getGeneration()
                        .equals(((Number) c.get("observedGeneration")).longValue()));
  }

  /** The replica holding the Lease, or null. */
  private static String leader() {
    Lease lease = client.leases().inNamespace(KdraChart.NAMESPACE).withName(LEASE).get();
    return lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
  }

  /** The data of a replica's leadership readiness check. */
  private static JsonNode leadership(String replica) throws Exception {
    String readiness = stack.services.process(replica).readiness();
    assertThat(readiness).as(replica + " readiness").startsWith("200 ");
    JsonNode body = new ObjectMapper().readTree(readiness.substring(4));
    for (JsonNode check : body.path("checks")) {
      if (check.path("name").asText().equals("computeclass-bridge-leadership")) {
        return check.path("data");
      }
    }
    throw new AssertionError("no leadership check in " + readiness);
  }
}
