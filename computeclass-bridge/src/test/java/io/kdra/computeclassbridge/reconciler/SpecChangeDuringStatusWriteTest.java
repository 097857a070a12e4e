package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kdra.computeclassbridge.RetryOnConflict;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.ComputeClassStatus;
import io.kdra.computeclassbridge.model.Priority;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.io.FileInputStream;
import java.io.InputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A spec change made while a reconcile is about to write the status, whose event reaches the bridge
 * only after that write (a loaded informer; in BridgeFailoverIT a new leader's first reconcile
 * writing the status its killed predecessor never wrote, while the test changes the spec), is
 * reconciled all the same. The operator SDK (5.3.0) drops every event older than the response of a
 * status patch it made itself, and its status patch does not check the resourceVersion, so such a
 * change was never reconciled.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
@TestProfile(SpecChangeDuringStatusWriteTest.Gated.class)
class SpecChangeDuringStatusWriteTest {

  private static final String NAME = "raced";

  /** Replaces the system clock with {@link GatedClock}. */
  public static class Gated implements QuarkusTestProfile {
    @Override
    public Set<Class<?>> getEnabledAlternatives() {
      return Set.of(GatedClock.class);
    }

    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "kdra.computeclass-bridge.namespaces.names",
          "team-raced",
          "kdra.computeclass-bridge.namespaces.selector",
          "none",
          "quarkus.log.category.\"io.javaoperatorsdk.operator.processing\".level",
          "DEBUG");
    }
  }

  /**
   * The system clock, whose next reading a test can hold: the reconciler reads it once the
   * generated objects are applied, right before it writes the status.
   */
  @Alternative
  @Singleton
  public static class GatedClock extends Clock {
    private CountDownLatch holding;
    private CountDownLatch release;

    /** Holds the next reading until {@code release} counts down; {@code holding} says it waits. */
    synchronized void holdNext(CountDownLatch holding, CountDownLatch release) {
      this.holding = holding;
      this.release = release;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      CountDownLatch h;
      CountDownLatch r;
      synchronized (this) {
        h = holding;
        r = release;
        holding = null;
        release = null;
      }
      if (h != null) {
        h.countDown();
        try {
          r.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return Instant.now();
    }
  }

  @Inject KubernetesClient client;
  @Inject GatedClock clock;
  @Inject Operator operator;

  @Test
  void aSpecChangeSeenOnlyAfterTheStatusWriteIsReconciled() throws Exception {
    crd();
    client
        .resource(
            new NamespaceBuilder().withNewMetadata().withName("team-raced").endMetadata().build())
        .create();
    client.resource(computeClass(NAME, Priority.gpu("nvidia-l4", 1))).create();
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () -> {
              assertThat(subrequests()).containsExactly("nvidia-l4-x1");
              assertThat(readyForGeneration()).isTrue();
            });

    // the status is gone (the replica that applied the objects died before writing it): the next
    // reconcile, woken here by a namespace, applies nothing and writes the status; it is held right
    // before that write
    client
        .resources(ComputeClass.class)
        .withName(NAME)
        .editStatus(
            cc -> {
              cc.setStatus(new ComputeClassStatus());
              return cc;
            });
    Controller<ComputeClass> controller = controller();
    ResourceID id = new ResourceID(NAME);
    await()
        .atMost(Duration.ofMinutes(1))
        .until(
            () ->
                controller
                    .getEventSourceManager()
                    .getControllerEventSource()
                    .get(id)
                    .map(cc -> cc.getStatus() == null || cc.getStatus().getConditions().isEmpty())
                    .orElse(false));
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    clock.holdNext(holding, release);
    client
        .resource(
            new NamespaceBuilder().withNewMetadata().withName("unselected").endMetadata().build())
        .create();
    assertThat(holding.await(2, TimeUnit.MINUTES)).isTrue();

    // the spec changes meanwhile; the primary informer's handler is busy (its monitor held here),
    // so the change's event reaches the operator only after the status write
    synchronized (controller.getEventSourceManager().getControllerEventSource()) {
      RetryOnConflict.edit(
          client.resources(ComputeClass.class).withName(NAME),
          cc -> {
            cc.getSpec()
                .setPriorities(
                    new ArrayList<>(
                        List.of(
                            Priority.gpu("nvidia-tesla-a100", 1), Priority.gpu("nvidia-l4", 1))));
            return cc;
          });
      release.countDown();
      await()
          .atMost(Duration.ofMinutes(1))
          .until(() -> !controller.getEventProcessor().isUnderProcessing(id));
    }

    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(
            () -> {
              assertThat(subrequests()).containsExactly("nvidia-tesla-a100-x1", "nvidia-l4-x1");
              assertThat(readyForGeneration()).isTrue();
            });
  }

  @SuppressWarnings("unchecked")
  private Controller<ComputeClass> controller() {
    return (Controller<ComputeClass>)
        operator.getRegisteredController("computeclass").orElseThrow();
  }

  private void crd() throws Exception {
    if (client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName("computeclasses.cloud.google.com")
            .get()
        == null) {
      try (InputStream in = new FileInputStream("../helm/kdra/crds-optional/computeclass.yaml")) {
        client
            .resource(
                client.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class))
            .create();
      }
    }
  }

  private List<String> subrequests() {
    ResourceClaimTemplate t =
        client
            .resources(ResourceClaimTemplate.class)
            .inNamespace("team-raced")
            .withName(NAME)
            .get();
    assertThat(t).as("template of %s", NAME).isNotNull();
    return t.getSpec().getSpec().getDevices().getRequests().get(0).getFirstAvailable().stream()
        .map(DeviceSubRequest::getName)
        .toList();
  }

  private boolean readyForGeneration() {
    ComputeClass cc = client.resources(ComputeClass.class).withName(NAME).get();
    long generation =
        cc.getMetadata().getGeneration() == null ? 0 : cc.getMetadata().getGeneration();
    return cc.getStatus() != null
        && cc.getStatus().getConditions().stream()
            .anyMatch(
                c ->
                    "Ready".equals(c.getType())
                        && "True".equals(c.getStatus())
                        && c.getObservedGeneration() != null
                        && c.getObservedGeneration() == generation);
  }
}
