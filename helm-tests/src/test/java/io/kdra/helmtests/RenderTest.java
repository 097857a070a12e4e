package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What every rendered object carries (labels, probes, privileges), replicas and leader election,
 * the default device classes, and configuration reaching the services. The driver's DaemonSet is
 * {@link DriverRenderTest}'s, networking and the inventory gRPC {@link NetworkRenderTest}'s.
 */
class RenderTest {

  static final List<String> DEPLOYMENTS =
      List.of("slice-publisher", "claim-controller", "computeclass-bridge");

  static Stream<Arguments> valueSets() {
    return Stream.of(
        Arguments.of("defaults", Map.of()),
        Arguments.of("every value set", Chart.fullValues()),
        Arguments.of(
            "all components on GKE",
            Chart.values("cluster.gke", true, "computeClassBridge.enabled", true)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("valueSets")
  void everyObjectParsesAndCarriesTheRecommendedLabels(String name, Map<String, Object> values) {
    List<HasMetadata> objects = Chart.render(values);
    assertThat(objects).isNotEmpty();
    for (HasMetadata o : objects) {
      Map<String, String> labels = o.getMetadata().getLabels();
      assertThat(labels)
          .as("%s %s", o.getKind(), o.getMetadata().getName())
          .containsKeys("app.kubernetes.io/part-of");
      if (!o.getKind().equals("CustomResourceDefinition")) {
        assertThat(labels)
            .as("%s %s", o.getKind(), o.getMetadata().getName())
            .containsKeys(
                "app.kubernetes.io/name",
                "app.kubernetes.io/instance",
                "app.kubernetes.io/version",
                "app.kubernetes.io/managed-by",
                "app.kubernetes.io/component",
                "helm.sh/chart")
            .containsEntry("app.kubernetes.io/managed-by", "Helm");
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("valueSets")
  void everyContainerHasBothProbesOnTheHttpPort(String name, Map<String, Object> values) {
    List<Container> containers =
        Rendered.podSpecs(Chart.render(values)).stream()
            .flatMap(p -> p.getContainers().stream())
            .toList();
    assertThat(containers).isNotEmpty();
    for (Container c : containers) {
      assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/q/health/live");
      assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/q/health/ready");
      assertThat(c.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("http");
      assertThat(c.getPorts())
          .anyMatch(p -> p.getName().equals("http") && p.getContainerPort() == 8080);
      assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
      assertThat(c.getSecurityContext().getCapabilities().getDrop()).contains("ALL");
    }
  }

  @Test
  void deploymentsHaveReplicasAndDisruptionBudgets() {
    List<HasMetadata> objects =
        Chart.render(Chart.values("computeClassBridge.enabled", true, "cluster.gke", true));
    for (String c : DEPLOYMENTS) {
      Deployment d = Rendered.one(objects, Deployment.class, "kdra-" + c);
      PodDisruptionBudget pdb = Rendered.one(objects, PodDisruptionBudget.class, "kdra-" + c);
      assertThat(pdb.getSpec().getSelector().getMatchLabels())
          .isEqualTo(d.getSpec().getSelector().getMatchLabels());
      assertThat(d.getSpec().getTemplate().getMetadata().getLabels())
          .containsAllEntriesOf(d.getSpec().getSelector().getMatchLabels());
      assertThat(d.getSpec().getTemplate().getSpec().getSecurityContext().getRunAsNonRoot())
          .isTrue();
    }
    assertThat(
            Rendered.one(objects, Deployment.class, "kdra-slice-publisher").getSpec().getReplicas())
        .isEqualTo(2);
    assertThat(
            Rendered.one(objects, Deployment.class, "kdra-claim-controller")
                .getSpec()
                .getReplicas())
        .isEqualTo(2);
    assertThat(
            Rendered.one(objects, Deployment.class, "kdra-computeclass-bridge")
                .getSpec()
                .getReplicas())
        .isEqualTo(2);
  }

  @Test
  void leaderElectionIsOnByDefault() {
    List<HasMetadata> objects = Chart.render(Map.of());
    assertThat(Rendered.properties(objects, "kdra-slice-publisher"))
        .containsEntry("kdra.slice-publisher.leader-election.enabled", "true")
        .containsEntry("kdra.slice-publisher.leader-election.lease-namespace", "kdra-system")
        .containsEntry("kdra.slice-publisher.drivers", "gpu.kdra.io,tpu.kdra.io")
        .containsEntry("kdra.slice-publisher.auth.enabled", "true");
    assertThat(Rendered.properties(objects, "kdra-claim-controller"))
        .containsEntry("kdra.claim-controller.leader-election.enabled", "true")
        // adopt, the service's own default: kept in one place (ClaimControllerConfig)
        .doesNotContainKey("kdra.claim-controller.template-mode");
  }

  @Test
  void theBridgeElectsALeaderWithItsLeaseInTheReleaseNamespace() {
    List<HasMetadata> objects =
        Chart.render(Chart.values("computeClassBridge.enabled", true, "cluster.gke", true));
    assertThat(Rendered.properties(objects, "kdra-computeclass-bridge"))
        .containsEntry("kdra.computeclass-bridge.leader-election.enabled", "true")
        .containsEntry(
            "kdra.computeclass-bridge.leader-election.lease-name", "kdra-computeclass-bridge")
        .containsEntry("kdra.computeclass-bridge.leader-election.lease-namespace", "kdra-system");
    assertThat(
            Rendered.one(objects, Deployment.class, "kdra-computeclass-bridge")
                .getSpec()
                .getReplicas())
        .isEqualTo(2);
  }

  @Test
  void aSingleBridgeWithoutLeaderElectionHasNoLeaseRole() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "computeClassBridge.enabled",
                true,
                "cluster.gke",
                true,
                "computeClassBridge.replicas",
                1,
                "computeClassBridge.config.leader-election.enabled",
                false));
    assertThat(Rendered.properties(objects, "kdra-computeclass-bridge"))
        .containsEntry("kdra.computeclass-bridge.leader-election.enabled", "false");
    assertThat(objects)
        .noneMatch(
            o -> o.getMetadata().getName().equals("kdra-computeclass-bridge-leader-election"));
  }

  @Test
  void defaultDeviceClassesSelectTheirDriver() {
    List<HasMetadata> objects = Chart.render(Map.of());
    for (String driver : List.of("gpu.kdra.io", "tpu.kdra.io")) {
      DeviceClass dc = Rendered.one(objects, DeviceClass.class, driver);
      assertThat(dc.getSpec().getSelectors())
          .singleElement()
          .satisfies(
              s ->
                  assertThat(s.getCel().getExpression())
                      .isEqualTo("device.driver == \"" + driver + "\""));
    }
    assertThat(Chart.render(Chart.fullValues()))
        .filteredOn(o -> o instanceof DeviceClass)
        .extracting(o -> o.getMetadata().getName())
        .containsExactly("gpu.example.org");
  }

  @Test
  void aDefaultDeviceClassServesTheExtendedResourceNameFromValues() {
    for (String driver : List.of("gpu.kdra.io", "tpu.kdra.io")) {
      assertThat(
              Rendered.one(Chart.render(Map.of()), DeviceClass.class, driver)
                  .getSpec()
                  .getExtendedResourceName())
          .isNull();
    }
    List<HasMetadata> objects =
        Chart.render(Chart.values("deviceClasses.gpu.extendedResourceName", "gpu.kdra.io/gpu"));
    assertThat(
            Rendered.one(objects, DeviceClass.class, "gpu.kdra.io")
                .getSpec()
                .getExtendedResourceName())
        .isEqualTo("gpu.kdra.io/gpu");
    assertThat(
            Rendered.one(objects, DeviceClass.class, "tpu.kdra.io")
                .getSpec()
                .getExtendedResourceName())
        .isNull();
    assertThat(
            Rendered.one(Chart.render(Chart.fullValues()), DeviceClass.class, "gpu.example.org")
                .getSpec()
                .getExtendedResourceName())
        .isEqualTo("example.org/gpu");
  }

  @Test
  void everyConfigValueReachesTheServiceProperties() {
    List<HasMetadata> objects = Chart.render(Chart.fullValues());
    assertThat(Rendered.properties(objects, "kdra-full-slice-publisher"))
        .containsEntry(
            "kdra.slice-publisher.network-pools.fabric-a.node-selector.\"example.org/fabric\"", "a")
        .containsEntry(
            "kdra.slice-publisher.node-label-attributes",
            "cloud.google.com/gke-nodepool,topology.kubernetes.io/zone")
        .containsEntry("kdra.slice-publisher.stale.remove-after", "15m")
        .containsEntry("kdra.slice-publisher.leader-election.lease-namespace", "kdra-leases")
        .containsEntry("kdra.slice-publisher.slice-field-selector", "true")
        .containsEntry(
            "quarkus.otel.exporter.otlp.endpoint", "http://otel-collector.observability:4317")
        .containsEntry("quarkus.otel.exporter.otlp.protocol", "http/protobuf")
        .containsEntry("quarkus.log.level", "DEBUG");
    assertThat(Rendered.properties(objects, "kdra-full-claim-controller"))
        .containsEntry("kdra.claim-controller.scheduler-name", "gpu-scheduler")
        .containsEntry("kdra.claim-controller.retry.conflict-retries", "8")
        .containsEntry(
            "kdra.claim-controller.allocator.feature-gates",
            "DRAAdminAccess=false,DRAConsumableCapacity=true,DRADerivedAttributes=false,"
                + "DRADeviceBindingConditions=true,DRADeviceCompatibilityGroups=false,"
                + "DRADeviceTaints=true,DRAOptionalNodeOperations=false,DRAPartitionableDevices=true,"
                + "DRAPrioritizedList=true")
        .containsEntry("quarkus.log.level", "WARN")
        .containsEntry(
            "quarkus.operator-sdk.controllers.pod-scheduler.retry.interval.max", "60000");
    assertThat(Rendered.properties(objects, "kdra-full-computeclass-bridge"))
        .containsEntry("kdra.computeclass-bridge.catalog.drivers.kdra-gpu", "gpu.example.org")
        .containsEntry("kdra.computeclass-bridge.catalog.drivers.gke-gpu", "gpu.nvidia.com")
        .containsEntry("kdra.computeclass-bridge.namespaces.names", "team-a,team-b")
        .containsEntry("kdra.computeclass-bridge.namespaces.selector", "example.org/gpus=enabled")
        .containsEntry(
            "quarkus.otel.exporter.otlp.endpoint", "http://otel-collector.observability:4317");
  }

  /** Columns: values, the rendered kdra.claim-controller.allocator.feature-gates. */
  static Stream<Arguments> allocatorFeatureGates() {
    String all =
        "DRAAdminAccess=true,DRAConsumableCapacity=true,DRADerivedAttributes=false,"
            + "DRADeviceBindingConditions=true,DRADeviceCompatibilityGroups=false,"
            + "DRADeviceTaints=true,DRAOptionalNodeOperations=false,DRAPartitionableDevices=true,"
            + "DRAPrioritizedList=true";
    return Stream.of(
        Arguments.of(named("defaults: every gate as Kubernetes 1.37 has it", Map.of()), all),
        Arguments.of(
            named(
                "an alpha gate turned on", Chart.values("featureGates.DRADerivedAttributes", true)),
            all.replace("DRADerivedAttributes=false", "DRADerivedAttributes=true")),
        Arguments.of(
            named(
                "a gate turned off in featureGates",
                Chart.values("featureGates.DRAPrioritizedList", false)),
            all.replace("DRAPrioritizedList=true", "DRAPrioritizedList=false")),
        Arguments.of(
            named(
                "the controller's own setting wins",
                Chart.values(
                    "claimController.config.allocator.feature-gates", "DRADeviceTaints=false")),
            "DRADeviceTaints=false"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("allocatorFeatureGates")
  void featureGatesReachTheControllersAllocator(Map<String, Object> values, String gates) {
    assertThat(Rendered.properties(Chart.render(values), "kdra-claim-controller"))
        .containsEntry("kdra.claim-controller.allocator.feature-gates", gates);
  }

  @Test
  void falseInConfigWinsOverWhatTheChartDerives() {
    assertThat(
            Rendered.properties(
                Chart.render(Chart.values("slicePublisher.config.auth.enabled", false)),
                "kdra-slice-publisher"))
        .containsEntry("kdra.slice-publisher.auth.enabled", "false");
  }

  @Test
  void aConfigChangeRestartsThePods() {
    String before =
        Rendered.one(Chart.render(Map.of()), Deployment.class, "kdra-slice-publisher")
            .getSpec()
            .getTemplate()
            .getMetadata()
            .getAnnotations()
            .get("checksum/config");
    String after =
        Rendered.one(
                Chart.render(Chart.values("slicePublisher.config.resync-period", "1m")),
                Deployment.class,
                "kdra-slice-publisher")
            .getSpec()
            .getTemplate()
            .getMetadata()
            .getAnnotations()
            .get("checksum/config");
    assertThat(after).isNotEqualTo(before);
  }
}
