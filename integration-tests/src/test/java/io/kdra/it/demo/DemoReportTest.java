package io.kdra.it.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kdra.it.karpenter.ScaleOutScenario;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.CdiSpec;
import io.kdra.it.services.RealPods;
import io.kdra.it.support.ServiceProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The demo's report: its text is the demo's contract (README shows it). */
class DemoReportTest {

  private static final Path KUBECONFIG = Path.of("/checkout/target/demo-kubeconfig.yaml");
  private static final Path KUBECTL = Path.of("/cache/kdra/k8s/1.37.2-linux-amd64/kubectl");

  @Test
  void aRunningPodShowsItsNodeDevicesCdiIdsAndWhatItsContainerSaw() {
    List<String> lines =
        DemoReport.pods(
            List.of(
                new DemoReport.PodLine(
                    "demo/trainer",
                    "node-b",
                    "Running",
                    List.of("gpu: node-b/gpu-0"),
                    List.of("k8s.gpu.kdra.io/claim=u1-gpu-0"),
                    List.of("KDRA_DEVICE_0=gpu-0", "/dev/hwrng"),
                    null),
                DemoReport.PodLine.pending("demo/too-big", "Unschedulable: no 80Gi GPU")));
    assertThat(lines)
        .containsExactly(
            "POD              NODE     STATUS   DEVICES (request: pool/device), CDI ids, what the"
                + " container saw; or why it is pending",
            "demo/trainer     node-b   Running  gpu: node-b/gpu-0",
            "                                   CDI k8s.gpu.kdra.io/claim=u1-gpu-0",
            "                                   saw KDRA_DEVICE_0=gpu-0 /dev/hwrng",
            "demo/too-big     -        Pending  Unschedulable: no 80Gi GPU");
  }

  @Test
  void onTheTestKubeletNoContainerRunsSoThereIsNoSawLine() {
    assertThat(
            DemoReport.pods(
                List.of(
                    new DemoReport.PodLine(
                        "demo/trainer",
                        "node-b",
                        "Running",
                        List.of("gpu: node-b/gpu-0"),
                        List.of(),
                        null,
                        null))))
        .containsExactly(
            DemoReport.HEADER,
            "demo/trainer     node-b   Running  gpu: node-b/gpu-0",
            "                                   CDI not prepared");
  }

  @Test
  void whatTheContainerSawWrapsUnderItself() {
    List<String> seen =
        List.of(
            "KDRA_DEVICE_0=gpu-0",
            "KDRA_DEVICE_0_SHARING_STRATEGY=Exclusive",
            "KDRA_DEVICE_1=gpu-1",
            "KDRA_DEVICE_1_SHARING_STRATEGY=Exclusive",
            "/dev/fuse");
    assertThat(
            DemoReport.pods(
                List.of(
                    new DemoReport.PodLine(
                        "demo/inference",
                        "node-a",
                        "Running",
                        List.of("gpus: node-a/gpu-0, node-a/gpu-1"),
                        List.of("a", "b"),
                        seen,
                        null))))
        .endsWith(
            "                                   saw KDRA_DEVICE_0=gpu-0"
                + " KDRA_DEVICE_0_SHARING_STRATEGY=Exclusive",
            "                                       KDRA_DEVICE_1=gpu-1"
                + " KDRA_DEVICE_1_SHARING_STRATEGY=Exclusive",
            "                                       /dev/fuse")
        .allMatch(l -> l.length() <= DemoReport.WIDTH || !l.startsWith(" "));
  }

  @Test
  void whatTheContainerSawIsTheSpecsEnvAndTheDeviceNodesItsDevListed() {
    List<String> log =
        List.of(
            "HOME=/root",
            "KDRA_DEVICE_0=gpu-0",
            "KDRA_DEVICE_1=gpu-1",
            "SIMULATED_GPU_UUID=GPU-1",
            "--- /dev",
            "fuse",
            "null",
            "zero",
            RealPods.LISTED);
    assertThat(
            DemoReport.seenThroughCdi(
                log,
                Set.of("KDRA_DEVICE_0", "KDRA_DEVICE_1", "SIMULATED_GPU_UUID"),
                new java.util.LinkedHashSet<>(List.of("/dev/fuse", "/dev/vsock"))))
        .containsExactly(
            "KDRA_DEVICE_0=gpu-0", "KDRA_DEVICE_1=gpu-1", "SIMULATED_GPU_UUID=GPU-1", "/dev/fuse");
  }

  @Test
  void whileTheDemoRunsItNamesTheKubeconfigAndTheControlPlanesKubectl() {
    assertThat(DemoReport.kubectl(false, KUBECONFIG, KUBECTL, "1.37.2"))
        .containsExactly(
            "Point kubectl at it (while this runs):",
            "  export KUBECONFIG=/checkout/target/demo-kubeconfig.yaml",
            "  alias kubectl=/cache/kdra/k8s/1.37.2-linux-amd64/kubectl   # v1.37.2, the API"
                + " server's version; one on PATH may be skewed",
            "  kubectl get pods,resourceclaims -n demo -o wide; kubectl get"
                + " resourceslices,deviceclasses,computeclasses");
  }

  @Test
  void withoutTheControlPlanesKubectlItSaysWhichVersionMatches() {
    assertThat(DemoReport.kubectl(false, KUBECONFIG, null, "1.37.2"))
        .contains(
            "  # use kubectl v1.37.x (the API server is v1.37.2; kubectl supports one minor version"
                + " of skew)");
  }

  @Test
  void withOnceItPrintsNoKubeconfigItIsAboutToDelete() {
    assertThat(DemoReport.kubectl(true, KUBECONFIG, KUBECTL, "1.37.2"))
        .containsExactly(DemoReport.ONCE)
        .noneMatch(l -> l.contains("KUBECONFIG"));
  }

  @Test
  void theServicesPortsSayWhereMetricsAndHealthAre() {
    assertThat(
            DemoReport.services(
                List.of(
                    new DemoReport.Service("slice-publisher", 41000),
                    new DemoReport.Service("device-driver-node-a", 41001))))
        .containsExactly(
            "Services (each on one port: metrics at /q/metrics, health at /q/health):",
            "  slice-publisher              http://127.0.0.1:41000",
            "  device-driver-node-a         http://127.0.0.1:41001");
  }

  /** README's sample is the report of a real run: these pods formatted as the demo does. */
  @Test
  void readmesSampleIsWhatTheReportPrints() throws Exception {
    String readme =
        Files.readString(ServiceProcess.moduleDir("bin").getParent().resolve("README.md"));
    String trainer = "33d307ef-8099-4023-ad52-f1388bfb6caf";
    String inference = "5f52c084-f7be-48eb-9e62-22564fda50d2";
    List<String> lines =
        new ArrayList<>(
            DemoReport.pods(
                List.of(
                    new DemoReport.PodLine(
                        "demo/trainer",
                        "node-b",
                        "Running",
                        List.of("gpu: node-b/gpu-0"),
                        List.of("k8s.gpu.kdra.io/claim=" + trainer + "-gpu-0"),
                        List.of(
                            "KDRA_DEVICE_0=gpu-0",
                            "KDRA_DEVICE_0_SHARING_STRATEGY=Exclusive",
                            "SIMULATED_GPU_UUID=" + SimulatedNode.uuid("node-b", 0),
                            "/dev/hwrng"),
                        null),
                    new DemoReport.PodLine(
                        "demo/inference",
                        "node-a",
                        "Running",
                        List.of("accelerator/nvidia-l4-x2: node-a/gpu-0, node-a/gpu-1"),
                        List.of(
                            "k8s.gpu.kdra.io/claim=" + inference + "-gpu-0",
                            "k8s.gpu.kdra.io/claim=" + inference + "-gpu-1"),
                        List.of(
                            "KDRA_DEVICE_0=gpu-0",
                            "KDRA_DEVICE_0_SHARING_STRATEGY=Exclusive",
                            "KDRA_DEVICE_1=gpu-1",
                            "KDRA_DEVICE_1_SHARING_STRATEGY=Exclusive",
                            "SIMULATED_GPU_UUID=" + SimulatedNode.uuid("node-a", 1),
                            "/dev/fuse",
                            "/dev/vsock"),
                        null),
                    DemoReport.PodLine.pending(
                        "demo/too-big",
                        "Unschedulable: claim too-big-gpu-spsnn:"
                            + " request \"gpu\": 0 devices in class \"gpu-80gi\", 0 free"))));
    lines.add("");
    lines.addAll(
        DemoReport.services(
            List.of(
                new DemoReport.Service("slice-publisher", 43079),
                new DemoReport.Service("device-driver-node-a", 41571),
                new DemoReport.Service("device-driver-node-b", 44967),
                new DemoReport.Service("claim-controller", 36173),
                new DemoReport.Service("computeclass-bridge", 46675))));
    assertThat(readme).contains(String.join("\n", lines) + "\n");
    assertThat(readme)
        .contains(
            String.join(
                    "\n",
                    DemoReport.kubectl(
                        false,
                        Path.of("<checkout>/target/demo-kubeconfig.yaml"),
                        Path.of("<cache>/k8s/1.37.2-linux-amd64/kubectl"),
                        "1.37.2"))
                + "\n\n"
                + Demo.RUNNING);
  }

  @Test
  void notRootTheDemoSaysItFallsBackToTestKubeletsUnlessAskedFor() {
    assertThat(DemoReport.nodesChoice(false, false))
        .isEqualTo(DemoReport.NOT_ROOT)
        .startsWith("[demo] not root, so test kubelets instead of real nodes");
    assertThat(DemoReport.nodesChoice(true, false)).isNull();
    assertThat(DemoReport.nodesChoice(false, true)).isNull();
    assertThat(DemoReport.nodesChoice(true, true)).isNull();
  }

  @Test
  void aCdiSpecGivesItsIdsEnvNamesAndDeviceNodes() throws Exception {
    CdiSpec spec =
        CdiSpec.parse(
            """
        {"cdiVersion": "0.5.0", "kind": "k8s.gpu.kdra.io/claim",
         "devices": [{"name": "u1-gpu-0", "containerEdits": {"env": ["KDRA_DEVICE_0=gpu-0"],
           "deviceNodes": [{"path": "/dev/fuse"}]}}],
         "containerEdits": {"env": ["KDRA_VISIBLE=1"]}}
        """);
    assertThat(spec.ids()).containsExactly("k8s.gpu.kdra.io/claim=u1-gpu-0");
    assertThat(spec.envNames()).containsExactly("KDRA_DEVICE_0", "KDRA_VISIBLE");
    assertThat(spec.deviceNodes()).containsExactly("/dev/fuse");
  }

  @Test
  void clusterModeNotAsRootIsRefusedBeforeAnythingStarts() {
    DemoArgs args = DemoArgs.parse("--once", "--cluster");
    assertThat(args.cluster()).isTrue();
    assertThat(args.once()).isTrue();
    assertThat(args.refusal(false))
        .isEqualTo(DemoReport.CLUSTER_NEEDS_ROOT)
        .startsWith("[demo] --cluster needs root");
    assertThat(args.refusal(true)).isNull();
    assertThat(DemoArgs.parse().refusal(false)).as("without --cluster: test kubelets").isNull();
  }

  @Test
  void clusterAndTestKubeletExcludeEachOtherAndUnknownFlagsGiveTheUsage() {
    assertThatThrownBy(() -> DemoArgs.parse("--cluster", "--test-kubelet"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("choose one")
        .hasMessageContaining(DemoArgs.USAGE);
    assertThatThrownBy(() -> DemoArgs.parse("--clutser")).hasMessage(DemoArgs.USAGE);
    assertThat(DemoArgs.parse("--cluster", "other").manifests()).isEqualTo(Path.of("other"));
    assertThat(DemoArgs.parse().manifests()).isEqualTo(Path.of("demo"));
  }

  @Test
  void onTheChartClusterTheReportListsTheChartsPodsAndServices() {
    assertThat(
            DemoReport.chartPods(
                List.of(
                    new DemoReport.ChartPod(
                        "kdra-slice-publisher-7f9c-x2x7q", "node-a", "10.244.0.5"),
                    new DemoReport.ChartPod(
                        "kdra-computeclass-bridge-5b776db649-m9w76", "node-b", "10.244.1.4"))))
        .containsExactly(
            "The chart's pods (namespace kdra-system, on the pod network):",
            "  kdra-slice-publisher-7f9c-x2x7q              node-a   10.244.0.5",
            "  kdra-computeclass-bridge-5b776db649-m9w76    node-b   10.244.1.4");
    assertThat(
            DemoReport.clusterServices(
                List.of(
                    new DemoReport.ClusterService(
                        "kdra-slice-publisher.kdra-system.svc", "10.96.0.77", "9000/TCP"))))
        .containsExactly(
            "Services (ClusterIPs that kube-proxy routes, names that CoreDNS resolves):",
            "  kdra-slice-publisher.kdra-system.svc         10.96.0.77      9000/TCP");
  }

  @Test
  void fromInsideAPodTheServiceNameResolvesAndThePolicyKeepsTheGrpcPortClosed() {
    List<String> log =
        List.of(
            "Server:\t\t10.96.0.10",
            "Address:\t10.96.0.10:53",
            "",
            "Name:\tkdra-slice-publisher.kdra-system.svc.cluster.local",
            "Address: 10.96.0.77",
            "",
            DemoReport.PORT_CLOSED);
    assertThat(DemoReport.fromInside("demo/dns-check", "node-a", "kdra-slice-publisher", 9000, log))
        .containsExactly(
            "From inside a pod (demo/dns-check on node-a):",
            "  kdra-slice-publisher.kdra-system.svc.cluster.local resolves to 10.96.0.77 (CoreDNS)",
            "  its port 9000: no connection (the chart's NetworkPolicy lets only device-drivers in)");
    assertThat(
            DemoReport.fromInside(
                "demo/dns-check",
                "node-a",
                "kdra-slice-publisher",
                9000,
                List.of(DemoReport.PORT_OPEN)))
        .containsExactly(
            "From inside a pod (demo/dns-check on node-a):",
            "  kdra-slice-publisher.kdra-system.svc.cluster.local does not resolve",
            "  its port 9000: connected (no NetworkPolicy enforced)");
  }

  @Test
  void kubectlDraFromOutsideShowsTheCommandAndItsOutput() {
    assertThat(DemoReport.command("kubectl dra devices", List.of("NODE  DEVICE", "node-a gpu-0")))
        .containsExactly("$ kubectl dra devices", "  NODE  DEVICE", "  node-a gpu-0");
  }

  @Test
  void whileTheChartClusterRunsItNamesTheKubeconfigKubectlAndThePlugin() {
    Path bin = Path.of("/checkout/bin");
    assertThat(DemoReport.clusterKubectl(false, KUBECONFIG, KUBECTL, "1.37.2", bin))
        .startsWith(DemoReport.kubectl(false, KUBECONFIG, KUBECTL, "1.37.2").toArray(String[]::new))
        .endsWith(
            "  export PATH=/checkout/bin:$PATH   # kubectl dra: bin/kubectl-dra, a kubectl plugin",
            "  kubectl get pods -A -o wide; kubectl dra devices; kubectl dra why pod/too-big -n demo");
    assertThat(DemoReport.clusterKubectl(true, KUBECONFIG, KUBECTL, "1.37.2", bin))
        .containsExactly(DemoReport.ONCE);
  }

  /** bin/demo refuses before it builds anything, so it says it itself: in the same words. */
  @Test
  void binDemoRefusesClusterNotRootInTheSameWords() throws Exception {
    String script =
        Files.readString(ServiceProcess.moduleDir("bin").getParent().resolve("bin/demo"));
    int start = script.indexOf("echo \"[demo] --cluster needs root");
    assertThat(start).as("bin/demo's refusal").isPositive();
    String echo = script.substring(start + "echo \"".length(), script.indexOf("\" >&2", start));
    assertThat(echo.replaceAll("\"\\s*\\\\\\n\\s*\"", " "))
        .isEqualTo(DemoReport.CLUSTER_NEEDS_ROOT);
  }

  @Test
  void scaleOutIsAStoryOfItsOwnWithoutManifestsOrTheChart() {
    DemoArgs args = DemoArgs.parse("--scale-out", "--once");
    assertThat(args.scaleOut()).isTrue();
    assertThat(args.once()).isTrue();
    assertThat(args.refusal(false)).as("test kubelets: no root needed").isNull();
    assertThat(DemoArgs.parse("--scale-out", "--test-kubelet").scaleOut()).isTrue();
    assertThat(DemoArgs.parse().scaleOut()).isFalse();
    assertThatThrownBy(() -> DemoArgs.parse("--scale-out", "--cluster"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("choose one")
        .hasMessageContaining(DemoArgs.USAGE);
    assertThatThrownBy(() -> DemoArgs.parse("--scale-out", "other"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--scale-out applies no manifests")
        .hasMessageContaining(DemoArgs.USAGE);
    assertThat(DemoArgs.USAGE).contains("--scale-out");
  }

  @Test
  void theScaleOutTableShowsEachPodsNodeItsInstanceTypeAndItsDevices() {
    assertThat(
            DemoReport.placements(
                List.of(
                    new ScaleOutScenario.Placement(
                        "gpu-work-6d9f7-abcde",
                        "a100-or-l4-nvidia-tesla-a100-x1-q2w3e",
                        "a100-x1",
                        "a100-or-l4",
                        List.of("accelerator/nvidia-tesla-a100-x1"),
                        List.of("a100-or-l4-nvidia-tesla-a100-x1-q2w3e/gpu-0"),
                        true),
                    new ScaleOutScenario.Placement(
                        "gpu-work-6d9f7-fghij",
                        "a100-or-l4-nvidia-l4-x2-r4t5y",
                        "l4-x2",
                        "a100-or-l4",
                        List.of("accelerator/nvidia-l4-x2", "accelerator/nvidia-l4-x2"),
                        List.of(
                            "a100-or-l4-nvidia-l4-x2-r4t5y/gpu-0",
                            "a100-or-l4-nvidia-l4-x2-r4t5y/gpu-1"),
                        false),
                    new ScaleOutScenario.Placement(
                        "gpu-work-6d9f7-klmno", null, null, null, List.of(), List.of(), false))))
        .containsExactly(
            "  POD                   TYPE     DEVICES (request: devices of its node)                   "
                + "  NODE",
            "  gpu-work-6d9f7-abcde  a100-x1  accelerator/nvidia-tesla-a100-x1: gpu-0                  "
                + "  a100-or-l4-nvidia-tesla-a100-x1-q2w3e",
            "  gpu-work-6d9f7-fghij  l4-x2    accelerator/nvidia-l4-x2: gpu-0, gpu-1 (not prepared yet)"
                + "  a100-or-l4-nvidia-l4-x2-r4t5y",
            "  gpu-work-6d9f7-klmno  -        Pending                                                  "
                + "  -");
  }
}
