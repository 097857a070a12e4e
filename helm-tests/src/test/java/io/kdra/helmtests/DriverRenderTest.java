package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The device driver's DaemonSet: host paths at the same paths, MPS roots, MIG mode, device access.
 */
class DriverRenderTest {

  @Test
  void theDriverMountsTheKubeletPathsAtTheSamePathsAndNothingPrivileged() {
    DaemonSet ds = Rendered.one(Chart.render(Map.of()), DaemonSet.class, "kdra-device-driver");
    PodSpec pod = ds.getSpec().getTemplate().getSpec();
    Map<String, String> hostPaths =
        pod.getVolumes().stream()
            .filter(v -> v.getHostPath() != null)
            .collect(Collectors.toMap(Volume::getName, v -> v.getHostPath().getPath()));
    assertThat(hostPaths)
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "plugins-registry", "/var/lib/kubelet/plugins_registry",
                "plugin-dir", "/var/lib/kubelet/plugins/gpu.kdra.io",
                "cdi", "/var/run/cdi"));
    Container c = pod.getContainers().get(0);
    Map<String, String> mounts =
        c.getVolumeMounts().stream()
            .collect(Collectors.toMap(VolumeMount::getName, VolumeMount::getMountPath));
    hostPaths.forEach((volume, path) -> assertThat(mounts).containsEntry(volume, path));
    assertThat(c.getSecurityContext().getPrivileged()).isFalse();
    assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(pod.getHostNetwork()).isNull();
    assertThat(pod.getHostPID()).isNull();
    assertThat(c.getEnv())
        .anyMatch(
            e ->
                e.getName().equals("NODE_NAME")
                    && e.getValueFrom().getFieldRef().getFieldPath().equals("spec.nodeName"));
    assertThat(pod.getTolerations())
        .extracting(t -> t.getKey())
        .contains("nvidia.com/gpu", "google.com/tpu");
    assertThat(
            pod.getAffinity()
                .getNodeAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution()
                .getNodeSelectorTerms())
        .hasSize(4);
    Properties p = Rendered.properties(Chart.render(Map.of()), "kdra-device-driver");
    assertThat(p)
        .containsEntry("kdra.device-driver.name", "gpu.kdra.io")
        .containsEntry(
            "kdra.device-driver.kubelet-registry-dir", "/var/lib/kubelet/plugins_registry")
        .containsEntry("kdra.device-driver.kubelet-plugins-dir", "/var/lib/kubelet/plugins")
        .containsEntry(
            "kdra.device-driver.checkpoint-file",
            "/var/lib/kubelet/plugins/gpu.kdra.io/checkpoint.json")
        .containsEntry("kdra.device-driver.cdi-dir", "/var/run/cdi")
        .containsEntry(
            "kdra.device-driver.publisher.address", "kdra-slice-publisher.kdra-system.svc:9000");
  }

  /**
   * By default a node's driver is upgraded with surge: the new pod (its own sockets, named by its
   * UID) registers before the old one goes. Off, the pods share fixed socket names and the old one
   * goes first.
   */
  @Test
  void theDriverIsUpgradedWithSurgeUnlessSeamlessUpgradeIsOff() {
    DaemonSet on = Rendered.one(Chart.render(Map.of()), DaemonSet.class, "kdra-device-driver");
    assertThat(on.getSpec().getUpdateStrategy().getRollingUpdate().getMaxSurge().getIntVal())
        .isEqualTo(1);
    assertThat(on.getSpec().getUpdateStrategy().getRollingUpdate().getMaxUnavailable().getIntVal())
        .isZero();
    assertThat(on.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv())
        .anyMatch(
            e ->
                e.getName().equals("KDRA_DEVICE_DRIVER_POD_UID")
                    && e.getValueFrom().getFieldRef().getFieldPath().equals("metadata.uid"));

    // on the node's network the new pod could not listen on the old one's httpPort
    for (Map<String, Object> values :
        List.of(
            Chart.values("deviceDriver.seamlessUpgrade", false),
            NetworkRenderTest.withoutPodNetwork())) {
      DaemonSet off = Rendered.one(Chart.render(values), DaemonSet.class, "kdra-device-driver");
      assertThat(off.getSpec().getUpdateStrategy().getRollingUpdate().getMaxSurge())
          .as("%s", values)
          .isNull();
      assertThat(
              off.getSpec().getUpdateStrategy().getRollingUpdate().getMaxUnavailable().getIntVal())
          .isEqualTo(1);
      assertThat(off.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv())
          .noneMatch(e -> e.getName().equals("KDRA_DEVICE_DRIVER_POD_UID"));
    }
  }

  /** Columns: values, the host directory mounted for MPS. */
  static Stream<Arguments> mpsRoots() {
    return Stream.of(
        Arguments.of(
            named(
                "the driver's default",
                Chart.values("deviceDriver.config.sharing.strategy", "mps")),
            "/run/kdra/mps"),
        Arguments.of(
            named(
                "one set in values",
                Chart.values(
                    "deviceDriver.config.sharing.strategy",
                    "mps",
                    "deviceDriver.config.sharing.mps-root",
                    "/var/lib/kdra/mps")),
            "/var/lib/kdra/mps"));
  }

  /** The CDI specs bind the MPS directories by host path, so the driver must use the host's. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("mpsRoots")
  void withMpsTheDriverMountsTheHostsMpsRootAtTheSamePath(Map<String, Object> values, String root) {
    List<HasMetadata> objects = Chart.render(values);
    PodSpec pod =
        Rendered.one(objects, DaemonSet.class, "kdra-device-driver")
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(pod.getVolumes())
        .filteredOn(v -> v.getName().equals("mps-root"))
        .singleElement()
        .satisfies(
            v -> {
              assertThat(v.getHostPath().getPath()).isEqualTo(root);
              assertThat(v.getHostPath().getType()).isEqualTo("DirectoryOrCreate");
            });
    assertThat(pod.getContainers().get(0).getVolumeMounts())
        .filteredOn(m -> m.getName().equals("mps-root"))
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getMountPath()).isEqualTo(root);
              assertThat(m.getReadOnly()).isNotEqualTo(Boolean.TRUE); // the daemons write there
            });
    // the daemons started in the driver's container share memory with the claims' containers
    assertThat(pod.getVolumes())
        .filteredOn(v -> v.getName().equals("mps-shm"))
        .singleElement()
        .satisfies(v -> assertThat(v.getHostPath().getPath()).isEqualTo(root + "/shm"));
    assertThat(pod.getContainers().get(0).getVolumeMounts())
        .filteredOn(m -> m.getName().equals("mps-shm"))
        .singleElement()
        .satisfies(m -> assertThat(m.getMountPath()).isEqualTo("/dev/shm"));
    assertThat(Rendered.properties(objects, "kdra-device-driver"))
        .containsEntry("kdra.device-driver.sharing.strategy", "mps")
        .containsEntry("kdra.device-driver.sharing.mps-root", root);
  }

  @Test
  void withoutMpsNoMpsRootIsMounted() {
    PodSpec pod =
        Rendered.one(
                Chart.render(Chart.values("deviceDriver.config.sharing.strategy", "time-slicing")),
                DaemonSet.class,
                "kdra-device-driver")
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(pod.getVolumes()).extracting(Volume::getName).doesNotContain("mps-root", "mps-shm");
  }

  /** MPS across namespaces is the driver's default (off) unless the value turns it on. */
  @Test
  void mpsAcrossNamespacesReachesTheDriverOnlyWhenSet() {
    assertThat(
            Rendered.properties(
                Chart.render(Chart.values("deviceDriver.config.sharing.strategy", "mps")),
                "kdra-device-driver"))
        .doesNotContainKey("kdra.device-driver.sharing.mps-across-namespaces");
    assertThat(
            Rendered.properties(
                Chart.render(
                    Chart.values(
                        "deviceDriver.config.sharing.strategy",
                        "mps",
                        "deviceDriver.config.sharing.mps-across-namespaces",
                        true)),
                "kdra-device-driver"))
        .containsEntry("kdra.device-driver.sharing.mps-across-namespaces", "true");
  }

  /** The node operations the devices need not have reach the driver only when set. */
  @Test
  void skipNodeOperationsAreTheDriversOnlyWhenSet() {
    assertThat(Rendered.properties(Chart.render(Map.of()), "kdra-device-driver"))
        .doesNotContainKey("kdra.device-driver.skip-node-operations");
    assertThat(
            Rendered.properties(
                Chart.render(
                    Chart.values(
                        "featureGates.DRAOptionalNodeOperations",
                        true,
                        "deviceDriver.config.skip-node-operations",
                        List.of("NodePrepareResources", "NodeUnprepareResources"))),
                "kdra-device-driver"))
        .containsEntry(
            "kdra.device-driver.skip-node-operations",
            "NodePrepareResources,NodeUnprepareResources");
  }

  /** YAML 1.1 reads a bare {@code mig-mode: off} as false; the chart takes it for "off". */
  @Test
  void aBareOffForTheMigModeIsOff() {
    assertThat(
            Rendered.properties(
                Chart.render(Chart.values("deviceDriver.config.mig-mode", false)),
                "kdra-device-driver"))
        .containsEntry("kdra.device-driver.mig-mode", "off");
    assertThat(
            Rendered.properties(
                Chart.render(Chart.values("deviceDriver.config.mig-mode", "dynamic")),
                "kdra-device-driver"))
        .containsEntry("kdra.device-driver.mig-mode", "dynamic");
  }

  @Test
  void theNvidiaDriverSeesTheHostsDevicesReadOnly() {
    List<HasMetadata> objects = Chart.render(Chart.fullValues());
    PodSpec pod =
        Rendered.one(objects, DaemonSet.class, "kdra-full-device-driver")
            .getSpec()
            .getTemplate()
            .getSpec();
    Map<String, String> hostPaths =
        pod.getVolumes().stream()
            .filter(v -> v.getHostPath() != null)
            .collect(Collectors.toMap(Volume::getName, v -> v.getHostPath().getPath()));
    assertThat(hostPaths)
        .containsEntry("plugin-dir", "/var/lib/k8s-kubelet/plugins/gpu.example.org")
        .containsEntry("plugins-registry", "/var/lib/k8s-kubelet/plugins_registry")
        .containsEntry("cdi", "/etc/cdi-dynamic")
        .containsEntry("host-dev", "/dev")
        .containsEntry("host-sys", "/sys")
        .containsEntry("host-nvidia-proc", "/proc/driver/nvidia");
    assertThat(pod.getContainers().get(0).getVolumeMounts())
        .filteredOn(m -> m.getName().startsWith("host-"))
        .allMatch(m -> m.getReadOnly() && m.getMountPath().startsWith("/host/"));
    assertThat(pod.getContainers().get(0).getImage())
        .isEqualTo(
            "registry.example.org/team/kdra/device-driver@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    assertThat(Rendered.properties(objects, "kdra-full-device-driver"))
        .containsEntry("kdra.device-driver.nvidia.host-root", "/host")
        .containsEntry("kdra.device-driver.backend", "nvidia")
        .containsEntry(
            "kdra.device-driver.publisher.address",
            "kdra-full-slice-publisher.kdra-system.svc:9090");
  }

  /** docs/user/install.md: a second release for TPU nodes. */
  @Test
  void aTpuDriverReleaseNextToAFullOne() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "deviceDriver.backend",
                "tpu",
                "deviceDriver.hostDevices.enabled",
                true,
                "slicePublisher.enabled",
                false,
                "claimController.enabled",
                false,
                "deviceClasses.gpu.enabled",
                false,
                "deviceClasses.tpu.enabled",
                false,
                "deviceDriver.config.publisher.address",
                "kdra-slice-publisher.kdra-system.svc:9000",
                "deviceDriver.publisherCA.secret",
                "kdra-slice-publisher-tls",
                "deviceDriver.nodeSelector",
                Map.of("cloud.google.com/gke-tpu-accelerator", "tpu-v6e-slice")));
    assertThat(objects)
        .extracting(HasMetadata::getKind)
        .doesNotContain("Deployment", "DeviceClass", "Service");
    assertThat(Rendered.properties(objects, "kdra-device-driver"))
        .containsEntry("kdra.device-driver.name", "tpu.kdra.io")
        .containsEntry("kdra.device-driver.backend", "tpu")
        .containsEntry("kdra.device-driver.tpu.host-root", "/host")
        .containsEntry(
            "kdra.device-driver.publisher.address", "kdra-slice-publisher.kdra-system.svc:9000");
    PodSpec pod =
        Rendered.one(objects, DaemonSet.class, "kdra-device-driver")
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(pod.getVolumes())
        .filteredOn(v -> v.getHostPath() != null)
        .extracting(v -> v.getHostPath().getPath())
        .contains("/var/lib/kubelet/plugins/tpu.kdra.io", "/dev", "/sys")
        .doesNotContain("/proc/driver/nvidia");
  }
}
