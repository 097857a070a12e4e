package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What the rendered objects carry: labels, probes, host paths, privileges, configuration. */
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
        podSpecs(Chart.render(values)).stream().flatMap(p -> p.getContainers().stream()).toList();
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
  void theDriverMountsTheKubeletPathsAtTheSamePathsAndNothingPrivileged() {
    DaemonSet ds = one(Chart.render(Map.of()), DaemonSet.class, "kdra-device-driver");
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
    Properties p = properties(Chart.render(Map.of()), "kdra-device-driver");
    assertThat(p)
        .containsEntry("driver.name", "gpu.kdra.io")
        .containsEntry("driver.kubelet-registry-dir", "/var/lib/kubelet/plugins_registry")
        .containsEntry("driver.kubelet-plugins-dir", "/var/lib/kubelet/plugins")
        .containsEntry(
            "driver.checkpoint-file", "/var/lib/kubelet/plugins/gpu.kdra.io/checkpoint.json")
        .containsEntry("driver.cdi-dir", "/var/run/cdi")
        .containsEntry("driver.publisher.address", "kdra-slice-publisher.kdra-system.svc:9000");
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
        one(objects, DaemonSet.class, "kdra-device-driver").getSpec().getTemplate().getSpec();
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
    assertThat(properties(objects, "kdra-device-driver"))
        .containsEntry("driver.sharing.strategy", "mps")
        .containsEntry("driver.sharing.mps-root", root);
  }

  @Test
  void withoutMpsNoMpsRootIsMounted() {
    PodSpec pod =
        one(
                Chart.render(Chart.values("deviceDriver.config.sharing.strategy", "time-slicing")),
                DaemonSet.class,
                "kdra-device-driver")
            .getSpec()
            .getTemplate()
            .getSpec();
    assertThat(pod.getVolumes()).extracting(Volume::getName).doesNotContain("mps-root", "mps-shm");
  }

  /** YAML 1.1 reads a bare {@code mig-mode: off} as false; the chart takes it for "off". */
  @Test
  void aBareOffForTheMigModeIsOff() {
    assertThat(
            properties(
                Chart.render(Chart.values("deviceDriver.config.mig-mode", false)),
                "kdra-device-driver"))
        .containsEntry("driver.mig-mode", "off");
    assertThat(
            properties(
                Chart.render(Chart.values("deviceDriver.config.mig-mode", "dynamic")),
                "kdra-device-driver"))
        .containsEntry("driver.mig-mode", "dynamic");
  }

  @Test
  void theNvidiaDriverSeesTheHostsDevicesReadOnly() {
    List<HasMetadata> objects = Chart.render(Chart.fullValues());
    PodSpec pod =
        one(objects, DaemonSet.class, "kdra-full-device-driver").getSpec().getTemplate().getSpec();
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
    assertThat(properties(objects, "kdra-full-device-driver"))
        .containsEntry("driver.nvidia.host-root", "/host")
        .containsEntry("driver.backend", "nvidia")
        .containsEntry(
            "driver.publisher.address", "kdra-full-slice-publisher.kdra-system.svc:9090");
  }

  @Test
  void deploymentsHaveReplicasAndDisruptionBudgets() {
    List<HasMetadata> objects =
        Chart.render(Chart.values("computeClassBridge.enabled", true, "cluster.gke", true));
    for (String c : DEPLOYMENTS) {
      Deployment d = one(objects, Deployment.class, "kdra-" + c);
      PodDisruptionBudget pdb = one(objects, PodDisruptionBudget.class, "kdra-" + c);
      assertThat(pdb.getSpec().getSelector().getMatchLabels())
          .isEqualTo(d.getSpec().getSelector().getMatchLabels());
      assertThat(d.getSpec().getTemplate().getMetadata().getLabels())
          .containsAllEntriesOf(d.getSpec().getSelector().getMatchLabels());
      assertThat(d.getSpec().getTemplate().getSpec().getSecurityContext().getRunAsNonRoot())
          .isTrue();
    }
    assertThat(one(objects, Deployment.class, "kdra-slice-publisher").getSpec().getReplicas())
        .isEqualTo(2);
    assertThat(one(objects, Deployment.class, "kdra-claim-controller").getSpec().getReplicas())
        .isEqualTo(2);
    assertThat(one(objects, Deployment.class, "kdra-computeclass-bridge").getSpec().getReplicas())
        .isEqualTo(2);
  }

  @Test
  void leaderElectionIsOnByDefault() {
    List<HasMetadata> objects = Chart.render(Map.of());
    assertThat(properties(objects, "kdra-slice-publisher"))
        .containsEntry("publisher.leader-election.enabled", "true")
        .containsEntry("publisher.leader-election.lease-namespace", "kdra-system")
        .containsEntry("publisher.drivers", "gpu.kdra.io,tpu.kdra.io")
        .containsEntry("publisher.auth.enabled", "true");
    assertThat(properties(objects, "kdra-claim-controller"))
        .containsEntry("kdra.claim-controller.leader-election.enabled", "true")
        .containsEntry("kdra.claim-controller.template-mode", "adopt");
  }

  @Test
  void theBridgeElectsALeaderWithItsLeaseInTheReleaseNamespace() {
    List<HasMetadata> objects =
        Chart.render(Chart.values("computeClassBridge.enabled", true, "cluster.gke", true));
    assertThat(properties(objects, "kdra-computeclass-bridge"))
        .containsEntry("bridge.leader-election.enabled", "true")
        .containsEntry("bridge.leader-election.lease-name", "kdra-computeclass-bridge")
        .containsEntry("bridge.leader-election.lease-namespace", "kdra-system");
    assertThat(one(objects, Deployment.class, "kdra-computeclass-bridge").getSpec().getReplicas())
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
    assertThat(properties(objects, "kdra-computeclass-bridge"))
        .containsEntry("bridge.leader-election.enabled", "false");
    assertThat(objects)
        .noneMatch(
            o -> o.getMetadata().getName().equals("kdra-computeclass-bridge-leader-election"));
  }

  @Test
  void thePublisherPodServesTheGrpcPortTheServiceTargets() {
    Deployment d = one(Chart.render(Map.of()), Deployment.class, "kdra-slice-publisher");
    assertThat(d.getSpec().getTemplate().getSpec().getContainers().get(0).getPorts())
        .extracting(p -> p.getName() + ":" + p.getContainerPort())
        .containsExactly("http:8080", "grpc:9000", "webhook:8443");
  }

  /** What a cluster without a pod network or kube-proxy needs, as HelmInstallIT installs it. */
  static Map<String, Object> withoutPodNetwork() {
    return Chart.values(
        "hostNetwork",
        true,
        "apiServer.host",
        "127.0.0.1",
        "apiServer.port",
        6443,
        "deviceDriver.httpPort",
        18081,
        "slicePublisher.httpPort",
        18082,
        "slicePublisher.grpcPort",
        19000,
        "claimController.httpPort",
        18083,
        "slicePublisher.strategy.type",
        "Recreate",
        // the API server cannot reach a Service's ClusterIP without kube-proxy
        "admission.opaqueConfigWebhook.enabled",
        false,
        "claimController.strategy.rollingUpdate.maxSurge",
        0,
        "claimController.strategy.rollingUpdate.maxUnavailable",
        1);
  }

  @Test
  void withoutAPodNetworkEveryPodUsesTheNodesNetworkItsOwnPortsAndTheGivenApiServer() {
    List<HasMetadata> objects = Chart.render(withoutPodNetwork());
    Map<String, Integer> ports =
        Map.of(
            "kdra-device-driver",
            18081,
            "kdra-slice-publisher",
            18082,
            "kdra-claim-controller",
            18083);
    for (HasMetadata o : objects) {
      PodSpec spec =
          o instanceof Deployment d
              ? d.getSpec().getTemplate().getSpec()
              : o instanceof DaemonSet ds ? ds.getSpec().getTemplate().getSpec() : null;
      if (spec == null) {
        continue;
      }
      String name = o.getMetadata().getName();
      assertThat(spec.getHostNetwork()).as(name).isTrue();
      assertThat(spec.getDnsPolicy()).as(name).isEqualTo("ClusterFirstWithHostNet");
      Container c = spec.getContainers().get(0);
      assertThat(c.getEnv())
          .as(name)
          .extracting(e -> e.getName() + "=" + e.getValue())
          .contains("KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=6443");
      assertThat(c.getPorts())
          .as(name)
          .filteredOn(p -> p.getName().equals("http"))
          .singleElement()
          .satisfies(p -> assertThat(p.getContainerPort()).isEqualTo(ports.get(name)));
      assertThat(properties(objects, name))
          .containsEntry("quarkus.http.port", ports.get(name).toString());
    }
    assertThat(
            one(objects, Deployment.class, "kdra-slice-publisher")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getPorts())
        .extracting(p -> p.getName() + ":" + p.getContainerPort())
        .containsExactly("http:18082", "grpc:19000");
    assertThat(properties(objects, "kdra-slice-publisher"))
        .containsEntry("quarkus.grpc.server.port", "19000");
    assertThat(
            one(objects, Deployment.class, "kdra-slice-publisher")
                .getSpec()
                .getStrategy()
                .getType())
        .isEqualTo("Recreate");
    assertThat(
            one(objects, Deployment.class, "kdra-claim-controller")
                .getSpec()
                .getStrategy()
                .getRollingUpdate()
                .getMaxSurge()
                .getIntVal())
        .isZero();
  }

  @Test
  void byDefaultPodsUseThePodNetworkAndTheKubernetesService() {
    List<HasMetadata> objects = Chart.render(Map.of());
    for (PodSpec spec : podSpecs(objects)) {
      assertThat(spec.getHostNetwork()).isNull();
      assertThat(spec.getContainers().get(0).getEnv())
          .extracting(e -> e.getName())
          .doesNotContain("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT");
    }
    assertThat(one(objects, Deployment.class, "kdra-slice-publisher").getSpec().getStrategy())
        .isNull();
    assertThat(properties(objects, "kdra-slice-publisher"))
        .containsEntry("quarkus.http.port", "8080")
        .containsEntry("quarkus.grpc.server.port", "9000");
  }

  @Test
  void theInventoryGrpcIsTlsWithTheChartsCertificateForTheServiceNameAndDriversTrustItsCa()
      throws Exception {
    List<HasMetadata> objects = Chart.render(Map.of());
    Secret secret = one(objects, Secret.class, "kdra-slice-publisher-tls");
    assertThat(secret.getType()).isEqualTo("kubernetes.io/tls");
    assertThat(secret.getData()).containsOnlyKeys("ca.crt", "tls.crt", "tls.key");
    CertificateFactory x509 = CertificateFactory.getInstance("X.509");
    X509Certificate ca =
        (X509Certificate)
            x509.generateCertificate(
                new ByteArrayInputStream(
                    Base64.getDecoder().decode(secret.getData().get("ca.crt"))));
    X509Certificate cert =
        (X509Certificate)
            x509.generateCertificate(
                new ByteArrayInputStream(
                    Base64.getDecoder().decode(secret.getData().get("tls.crt"))));
    cert.verify(ca.getPublicKey());
    assertThat(cert.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))))
        .contains("kdra-slice-publisher.kdra-system.svc", "kdra-slice-publisher");

    assertThat(properties(objects, "kdra-slice-publisher"))
        .containsEntry(
            "publisher.inventory-tls.certificate", "/var/run/secrets/kdra.io/inventory-tls/tls.crt")
        .containsEntry(
            "publisher.inventory-tls.key", "/var/run/secrets/kdra.io/inventory-tls/tls.key")
        .containsEntry("quarkus.grpc.server.plain-text", "false")
        .doesNotContainKey("quarkus.grpc.server.ssl.certificate");
    PodSpec publisher =
        one(objects, Deployment.class, "kdra-slice-publisher").getSpec().getTemplate().getSpec();
    assertThat(publisher.getVolumes())
        .filteredOn(v -> v.getSecret() != null)
        .singleElement()
        .satisfies(
            v ->
                assertThat(v.getSecret().getItems())
                    .extracting(i -> i.getKey())
                    .containsExactly("tls.crt", "tls.key"));
    assertThat(properties(objects, "kdra-device-driver"))
        .containsEntry("driver.publisher.address", "kdra-slice-publisher.kdra-system.svc:9000")
        .containsEntry(
            "driver.publisher.tls.ca-file", "/var/run/secrets/kdra.io/publisher-ca/ca.crt")
        .containsEntry("driver.publisher.tls.server-name", "kdra-slice-publisher.kdra-system.svc");
    PodSpec driver =
        one(objects, DaemonSet.class, "kdra-device-driver").getSpec().getTemplate().getSpec();
    // the CA only, never the publisher's key
    assertThat(driver.getVolumes())
        .filteredOn(v -> v.getSecret() != null)
        .singleElement()
        .satisfies(
            v ->
                assertThat(v.getSecret().getItems())
                    .extracting(i -> i.getKey())
                    .containsExactly("ca.crt"));
  }

  @Test
  void withTlsOffThePublisherServesPlainTextAndTheDriversDialIt() {
    // the webhook needs TLS (ValidationTest)
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "slicePublisher.tls.enabled",
                false,
                "admission.opaqueConfigWebhook.enabled",
                false));
    assertThat(objects).noneMatch(o -> o instanceof Secret);
    assertThat(properties(objects, "kdra-slice-publisher").stringPropertyNames())
        .noneMatch(
            k ->
                k.startsWith("quarkus.grpc.server.ssl")
                    || k.startsWith("publisher.inventory-tls")
                    || k.contains("plain-text"));
    assertThat(properties(objects, "kdra-device-driver").stringPropertyNames())
        .noneMatch(k -> k.startsWith("driver.publisher.tls"));
  }

  @Test
  void certManagerIssuesThePublishersCertificateIntoTheSameSecret() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "slicePublisher.tls.source",
                "cert-manager",
                "slicePublisher.tls.certManager.issuerRef.name",
                "cluster-ca",
                "slicePublisher.tls.certManager.issuerRef.kind",
                "ClusterIssuer"));
    assertThat(objects).noneMatch(o -> o instanceof Secret);
    GenericKubernetesResource certificate =
        objects.stream()
            .filter(o -> o.getKind().equals("Certificate"))
            .map(GenericKubernetesResource.class::cast)
            .findFirst()
            .orElseThrow();
    Map<String, Object> spec = certificate.get("spec");
    assertThat(spec).containsEntry("secretName", "kdra-slice-publisher-tls");
    assertThat(String.valueOf(spec.get("dnsNames")))
        .contains("kdra-slice-publisher.kdra-system.svc");
    assertThat(String.valueOf(spec.get("issuerRef")))
        .contains("name=cluster-ca")
        .contains("kind=ClusterIssuer");
  }

  @Test
  void onlyDevicedriversMayReachTheInventoryGrpc() {
    NetworkPolicy policy = one(Chart.render(Map.of()), NetworkPolicy.class, "kdra-slice-publisher");
    assertThat(policy.getSpec().getPodSelector().getMatchLabels())
        .containsEntry("app.kubernetes.io/component", "slice-publisher");
    // the third rule is the admission webhook's (AdmissionWebhookTest)
    assertThat(policy.getSpec().getIngress()).hasSize(3);
    var grpc = policy.getSpec().getIngress().get(0);
    assertThat(grpc.getPorts()).extracting(p -> p.getPort().getStrVal()).containsExactly("grpc");
    assertThat(grpc.getFrom())
        .singleElement()
        .satisfies(
            f ->
                assertThat(f.getPodSelector().getMatchLabels())
                    .containsEntry("app.kubernetes.io/component", "device-driver"));
    var http = policy.getSpec().getIngress().get(1);
    assertThat(http.getFrom()).isEmpty();
    assertThat(http.getPorts()).extracting(p -> p.getPort().getStrVal()).containsExactly("http");
  }

  @Test
  void thePublisherServiceExposesTheGrpcPort() {
    Service s = one(Chart.render(Map.of()), Service.class, "kdra-slice-publisher");
    // the second port is the admission webhook's (AdmissionWebhookTest)
    assertThat(s.getSpec().getPorts())
        .hasSize(2)
        .first()
        .satisfies(
            p -> {
              assertThat(p.getName()).isEqualTo("grpc");
              assertThat(p.getPort()).isEqualTo(9000);
              assertThat(p.getTargetPort().getStrVal()).isEqualTo("grpc");
              assertThat(p.getAppProtocol()).isEqualTo("grpc");
            });
    assertThat(s.getSpec().getSelector())
        .containsEntry("app.kubernetes.io/component", "slice-publisher");
  }

  @Test
  void defaultDeviceClassesSelectTheirDriver() {
    List<HasMetadata> objects = Chart.render(Map.of());
    for (String driver : List.of("gpu.kdra.io", "tpu.kdra.io")) {
      DeviceClass dc = one(objects, DeviceClass.class, driver);
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
              one(Chart.render(Map.of()), DeviceClass.class, driver)
                  .getSpec()
                  .getExtendedResourceName())
          .isNull();
    }
    List<HasMetadata> objects =
        Chart.render(Chart.values("deviceClasses.gpu.extendedResourceName", "gpu.kdra.io/gpu"));
    assertThat(one(objects, DeviceClass.class, "gpu.kdra.io").getSpec().getExtendedResourceName())
        .isEqualTo("gpu.kdra.io/gpu");
    assertThat(one(objects, DeviceClass.class, "tpu.kdra.io").getSpec().getExtendedResourceName())
        .isNull();
    assertThat(
            one(Chart.render(Chart.fullValues()), DeviceClass.class, "gpu.example.org")
                .getSpec()
                .getExtendedResourceName())
        .isEqualTo("example.org/gpu");
  }

  @Test
  void everyConfigValueReachesTheServiceProperties() {
    List<HasMetadata> objects = Chart.render(Chart.fullValues());
    assertThat(properties(objects, "kdra-full-slice-publisher"))
        .containsEntry("publisher.network-pools.fabric-a.node-selector.\"example.org/fabric\"", "a")
        .containsEntry(
            "publisher.node-label-attributes",
            "cloud.google.com/gke-nodepool,topology.kubernetes.io/zone")
        .containsEntry("publisher.stale.remove-after", "15m")
        .containsEntry("publisher.leader-election.lease-namespace", "kdra-leases")
        .containsEntry("publisher.slice-field-selector", "true")
        .containsEntry(
            "quarkus.otel.exporter.otlp.endpoint", "http://otel-collector.observability:4317")
        .containsEntry("quarkus.otel.exporter.otlp.protocol", "http/protobuf")
        .containsEntry("quarkus.log.level", "DEBUG");
    assertThat(properties(objects, "kdra-full-claim-controller"))
        .containsEntry("kdra.claim-controller.scheduler-name", "gpu-scheduler")
        .containsEntry("kdra.claim-controller.retry.conflict-retries", "8")
        .containsEntry(
            "kdra.claim-controller.allocator.feature-gates",
            "DRAAdminAccess=false,"
                + "DRAConsumableCapacity=true,DRADeviceBindingConditions=true,DRADeviceTaints=true,"
                + "DRAPartitionableDevices=true,DRAPrioritizedList=true")
        .containsEntry("quarkus.log.level", "WARN")
        .containsEntry(
            "quarkus.operator-sdk.controllers.pod-scheduler.retry.interval.max", "60000");
    assertThat(properties(objects, "kdra-full-computeclass-bridge"))
        .containsEntry("bridge.catalog.drivers.kdra-gpu", "gpu.example.org")
        .containsEntry("bridge.catalog.drivers.gke-gpu", "gpu.nvidia.com")
        .containsEntry("bridge.namespaces.names", "team-a,team-b")
        .containsEntry("bridge.namespaces.selector", "example.org/gpus=enabled")
        .containsEntry(
            "quarkus.otel.exporter.otlp.endpoint", "http://otel-collector.observability:4317");
  }

  /** Columns: values, the rendered kdra.claim-controller.allocator.feature-gates. */
  static Stream<Arguments> allocatorFeatureGates() {
    String all =
        "DRAAdminAccess=true,DRAConsumableCapacity=true,DRADeviceBindingConditions=true,"
            + "DRADeviceTaints=true,DRAPartitionableDevices=true,DRAPrioritizedList=true";
    return Stream.of(
        Arguments.of(named("defaults: every gate as Kubernetes 1.36 has it", Map.of()), all),
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
    assertThat(properties(Chart.render(values), "kdra-claim-controller"))
        .containsEntry("kdra.claim-controller.allocator.feature-gates", gates);
  }

  @Test
  void falseInConfigWinsOverWhatTheChartDerives() {
    assertThat(
            properties(
                Chart.render(Chart.values("slicePublisher.config.auth.enabled", false)),
                "kdra-slice-publisher"))
        .containsEntry("publisher.auth.enabled", "false");
  }

  @Test
  void aConfigChangeRestartsThePods() {
    String before =
        one(Chart.render(Map.of()), Deployment.class, "kdra-slice-publisher")
            .getSpec()
            .getTemplate()
            .getMetadata()
            .getAnnotations()
            .get("checksum/config");
    String after =
        one(
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

  /** docs/OPERATIONS.md, "Installing with Helm": a second release for TPU nodes. */
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
                "deviceDriver.nodeSelector",
                Map.of("cloud.google.com/gke-tpu-accelerator", "tpu-v6e-slice")));
    assertThat(objects)
        .extracting(HasMetadata::getKind)
        .doesNotContain("Deployment", "DeviceClass", "Service");
    assertThat(properties(objects, "kdra-device-driver"))
        .containsEntry("driver.name", "tpu.kdra.io")
        .containsEntry("driver.backend", "tpu")
        .containsEntry("driver.tpu.host-root", "/host")
        .containsEntry("driver.publisher.address", "kdra-slice-publisher.kdra-system.svc:9000");
    PodSpec pod =
        one(objects, DaemonSet.class, "kdra-device-driver").getSpec().getTemplate().getSpec();
    assertThat(pod.getVolumes())
        .filteredOn(v -> v.getHostPath() != null)
        .extracting(v -> v.getHostPath().getPath())
        .contains("/var/lib/kubelet/plugins/tpu.kdra.io", "/dev", "/sys")
        .doesNotContain("/proc/driver/nvidia");
  }

  static List<PodSpec> podSpecs(List<HasMetadata> objects) {
    return objects.stream()
        .map(
            o -> {
              if (o instanceof Deployment d) {
                return d.getSpec().getTemplate().getSpec();
              }
              if (o instanceof DaemonSet d) {
                return d.getSpec().getTemplate().getSpec();
              }
              return null;
            })
        .filter(p -> p != null)
        .toList();
  }

  static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type, String name) {
    return objects.stream()
        .filter(type::isInstance)
        .map(type::cast)
        .filter(o -> o.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name));
  }

  static Properties properties(List<HasMetadata> objects, String configMap) {
    Properties p = new Properties();
    try {
      p.load(
          new StringReader(
              one(objects, ConfigMap.class, configMap).getData().get("application.properties")));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    return p;
  }
}
