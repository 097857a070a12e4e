package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kdra.computeclassbridge.k8s.ApplyReport;
import io.kdra.computeclassbridge.k8s.GeneratedObjects;
import io.kdra.computeclassbridge.mapping.Labels;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import io.opentelemetry.api.trace.Tracer;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.io.FileInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A ComputeClass deleted while a reconcile of it is applying its objects leaves nothing behind: no
 * template, and no {@code used-by} label on a DeviceClass it shares with another class. The
 * reconcile is held right before it writes the DeviceClasses, the class is deleted, and the
 * reconcile is released once the cleanup has either finished (the class is gone) or waits for it. A
 * cleanup that ran in between, and a reconcile that then wrote its objects again, left them to the
 * garbage collector (which this mock server does not run) and the shared DeviceClass's label to
 * chance.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
@TestProfile(DeletionDuringApplyTest.Gated.class)
class DeletionDuringApplyTest {

  private static final String LEAVING = "leaving";
  private static final String STAYING = "staying";
  private static final String NAMESPACE = "team-leaving";
  private static final String TYPE = "nvidia-tesla-t4";
  private static final Duration WAIT = Duration.ofMinutes(1);

  /** Replaces the generated objects' writer with {@link GatedObjects}. */
  public static class Gated implements QuarkusTestProfile {
    @Override
    public Set<Class<?>> getEnabledAlternatives() {
      return Set.of(GatedObjects.class);
    }

    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "kdra.computeclass-bridge.namespaces.names",
          NAMESPACE,
          "kdra.computeclass-bridge.namespaces.selector",
          "none");
    }
  }

  /**
   * The bridge's writer of generated objects, whose next apply of a class's DeviceClasses (a
   * reconcile's, which wants some; a cleanup wants none) a test can hold.
   */
  @Alternative
  @Singleton
  public static class GatedObjects extends GeneratedObjects {
    private String held;
    private CountDownLatch holding;
    private CountDownLatch release;

    @Inject
    GatedObjects(KubernetesClient client, Tracer tracer) {
      super(client, tracer);
    }

    /** Holds the next reconcile of {@code name} until {@code release} counts down. */
    synchronized void holdNext(String name, CountDownLatch holding, CountDownLatch release) {
      this.held = name;
      this.holding = holding;
      this.release = release;
    }

    @Override
    public ApplyReport applyDeviceClasses(
        ComputeClass cc, List<DeviceClass> desired, Set<String> liveUsers) {
      CountDownLatch h = null;
      CountDownLatch r = null;
      synchronized (this) {
        if (!desired.isEmpty() && cc.getMetadata().getName().equals(held)) {
          h = holding;
          r = release;
          held = null;
        }
      }
      if (h != null) {
        h.countDown();
        try {
          r.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return super.applyDeviceClasses(cc, desired, liveUsers);
    }
  }

  @Inject KubernetesClient client;
  @Inject GatedObjects objects;
  @Inject Operator operator;
  @Inject ComputeClassReconciler reconciler;

  @Test
  void aClassDeletedWhileItsObjectsAreAppliedLeavesNothingBehind() throws Exception {
    crd();
    client
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
        .create();
    create(STAYING);
    await()
        .atMost(WAIT)
        .untilAsserted(() -> assertThat(users()).containsExactly(Labels.usedBy(STAYING)));

    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    objects.holdNext(LEAVING, holding, release);
    create(LEAVING);
    assertThat(holding.await(2, TimeUnit.MINUTES)).isTrue();

    client.resources(ComputeClass.class).withName(LEAVING).delete();
    await().atMost(WAIT).until(() -> gone() || reconciler.cleanupWaits(LEAVING));
    release.countDown();
    ResourceID id = new ResourceID(LEAVING);
    await().atMost(WAIT).until(() -> !controller().getEventProcessor().isUnderProcessing(id));

    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(gone()).as("%s is gone", LEAVING).isTrue();
              assertThat(template()).as("template of %s", LEAVING).isNull();
              assertThat(users()).containsExactly(Labels.usedBy(STAYING));
            });
  }

  private void create(String name) {
    ComputeClass cc = computeClass(name, Priority.gpu(TYPE, 1));
    cc.getMetadata().setUid(null);
    client.resource(cc).create();
  }

  private boolean gone() {
    return client.resources(ComputeClass.class).withName(LEAVING).get() == null;
  }

  private ResourceClaimTemplate template() {
    return client
        .resources(ResourceClaimTemplate.class)
        .inNamespace(NAMESPACE)
        .withName(LEAVING)
        .get();
  }

  /** The used-by labels of the DeviceClass both classes share. */
  private List<String> users() {
    DeviceClass d =
        client.resources(DeviceClass.class).withName(TYPE + ".computeclass.kdra.io").get();
    assertThat(d).as("DeviceClass of %s", TYPE).isNotNull();
    return d.getMetadata().getLabels().keySet().stream()
        .filter(k -> k.startsWith(Labels.USED_BY_PREFIX))
        .sorted()
        .toList();
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
}
