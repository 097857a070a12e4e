package io.kdra.devicedriver.sharing;

import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static io.kdra.devicedriver.testing.ClaimFixture.gpuConfig;
import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.plugin.PrepareResult;
import io.kdra.devicedriver.prepare.CdiSpecStore;
import io.kdra.devicedriver.prepare.CheckpointStore;
import io.kdra.devicedriver.prepare.ClaimTelemetry;
import io.kdra.devicedriver.prepare.DeviceDriver;
import io.kdra.devicedriver.prepare.PreparePlanner;
import io.kdra.devicedriver.testing.ClaimFixture;
import io.kdra.devicedriver.testing.FakeClaimReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Prepare and unprepare of shared GPUs through the driver, with the commands recorded. */
class GpuSharingSetupTest {
  private static final String UUID0 = "GPU-00000000-0000-4000-8000-000000000000";

  @TempDir Path dir;
  private final FakeClaimReader reader = new FakeClaimReader();
  private final RecordingCommandRunner runner = new RecordingCommandRunner();
  private final List<DeviceDriver> drivers = new ArrayList<>();

  private DeviceDriver driver(SharingSettings.Strategy strategy) throws Exception {
    return driver(strategy, dir.resolve("checkpoint.json"));
  }

  private DeviceDriver driver(SharingSettings.Strategy strategy, Path checkpoint) throws Exception {
    return driver(
        new SharingSettings(strategy, 4, Quantity.parse("1Gi"), dir.resolve("mps")), checkpoint);
  }

  private DeviceDriver driver(SharingSettings settings, Path checkpoint) throws Exception {
    Inventory gpus =
        SharedGpus.apply(
            new Inventory(List.of(gpu(0), gpu(1)), List.of(), List.of("/dev/nvidiactl")), settings);
    DeviceDriver d =
        new DeviceDriver(
            new PreparePlanner(
                ClaimFixture.DRIVER,
                ClaimFixture.NODE,
                new GpuSharingSetup(settings, runner, "nvidia-smi", "nvidia-cuda-mps-control")),
            reader,
            () -> gpus,
            new CdiSpecStore(dir.resolve("cdi")),
            CheckpointStore.open(checkpoint, Clock.systemUTC()),
            ClaimTelemetry.NONE,
            Clock.systemUTC(),
            4);
    drivers.add(d);
    return d;
  }

  private static NodeDevice gpu(int i) {
    return new NodeDevice(
        "gpu-" + i,
        Map.of(
            "type", new AttributeValue.StringValue("gpu"),
            "index", new AttributeValue.IntValue(i),
            "uuid", new AttributeValue.StringValue("GPU-00000000-0000-4000-8000-00000000000" + i)),
        Map.of("memory", Quantity.parse("80Gi")),
        List.of(),
        NodeDevice.Health.HEALTHY,
        "",
        List.of("/dev/nvidia" + i),
        Map.of());
  }

  @AfterEach
  void close() {
    drivers.forEach(DeviceDriver::close);
  }

  private String spec(String uid) throws Exception {
    return Files.readString(dir.resolve("cdi").resolve("k8s.gpu.kdra.io-claim_" + uid + ".json"));
  }

  private static ClaimFixture shareOfGpu0(String name, String shares, String memory) {
    return claim(name)
        .uid("u-" + name)
        .share(
            "gpu",
            "gpu-0",
            "00000000-0000-4000-8000-0000000000" + (10 + name.charAt(0) % 90),
            Map.of("shares", shares, "memory", memory));
  }

  @Test
  void mpsStartsOneDaemonPerGpuAndStopsItWhenTheLastClaimIsGone() throws Exception {
    DeviceDriver d = driver(SharingSettings.Strategy.MPS);
    ClaimFixture a = shareOfGpu0("a", "1", "20Gi");
    ClaimFixture b = shareOfGpu0("b", "2", "40Gi");
    reader.add(a.build());
    reader.add(b.build());
    Path pipe = dir.resolve("mps/gpu-0/pipe");
    Path log = dir.resolve("mps/gpu-0/log");
    String control = "CUDA_MPS_PIPE_DIRECTORY=" + pipe + " nvidia-cuda-mps-control <<< ";

    PrepareResult ra = d.prepareResourceClaims(List.of(a.ref())).get("u-a");
    PrepareResult rb = d.prepareResourceClaims(List.of(b.ref())).get("u-b");

    assertThat(ra.error()).isEmpty();
    assertThat(rb.error()).isEmpty();
    assertThat(runner.lines())
        .containsExactly(
            "nvidia-smi -i " + UUID0 + " -c EXCLUSIVE_PROCESS",
            "CUDA_MPS_LOG_DIRECTORY="
                + log
                + " CUDA_MPS_PIPE_DIRECTORY="
                + pipe
                + " CUDA_VISIBLE_DEVICES="
                + UUID0
                + " nvidia-cuda-mps-control -d",
            // the allocator's accounting as the daemon's server defaults, also on running servers
            control + "set_default_active_thread_percentage 25",
            control + "set_default_device_pinned_mem_limit 0 20480M",
            control + "get_server_list",
            // b's prepare asks the daemon whether it still runs, and raises them to b's share
            control + "get_server_list",
            control + "set_default_active_thread_percentage 50",
            control + "set_default_device_pinned_mem_limit 0 40960M",
            control + "get_server_list");
    assertThat(Files.isDirectory(pipe)).isTrue();
    assertThat(Files.isDirectory(log)).isTrue();
    String specB = spec("u-b");
    assertThat(specB)
        .contains("\"CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps\"")
        .contains("\"CUDA_MPS_LOG_DIRECTORY=/var/log/nvidia-mps\"")
        // the client limits follow the allocator's accounting: 2 of 4 shares, 40Gi
        .contains("\"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50\"")
        .contains("\"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=40960M\"")
        .contains("\"hostPath\" : \"" + pipe + "\"")
        .contains("\"containerPath\" : \"/tmp/nvidia-mps\"")
        // the daemons' shared memory: the directory the chart mounts at the driver's /dev/shm
        .contains("\"hostPath\" : \"" + dir.resolve("mps/shm") + "\"")
        .contains("\"containerPath\" : \"/dev/shm\"");
    assertThat(Files.isDirectory(dir.resolve("mps/shm"))).isTrue();
    assertThat(spec("u-a")).contains("\"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25\"");

    runner.clear();
    assertThat(d.unprepareResourceClaims(List.of(a.ref())).get("u-a")).isEmpty();
    assertThat(runner.lines()).isEmpty(); // b still uses the daemon
    assertThat(d.unprepareResourceClaims(List.of(b.ref())).get("u-b")).isEmpty();
    assertThat(runner.lines())
        .containsExactly(
            "CUDA_MPS_PIPE_DIRECTORY=" + pipe + " nvidia-cuda-mps-control <<< quit",
            "nvidia-smi -i " + UUID0 + " -c DEFAULT");
    // a repeated unprepare does not stop it again
    runner.clear();
    assertThat(d.unprepareResourceClaims(List.of(b.ref())).get("u-b")).isEmpty();
    assertThat(runner.lines()).isEmpty();
  }

  /**
   * A rolling update: the new driver pod unprepares the last claim on a GPU (stopping its daemon)
   * that the old pod prepared; the kubelet's next prepare on the old pod starts the daemon again
   * rather than trusting its memory of having started it.
   */
  @Test
  void aDaemonTheOtherDriverPodStoppedIsStartedAgain() throws Exception {
    DeviceDriver oldPod = driver(SharingSettings.Strategy.MPS);
    DeviceDriver newPod = driver(SharingSettings.Strategy.MPS);
    ClaimFixture a = shareOfGpu0("a", "1", "20Gi");
    ClaimFixture b = shareOfGpu0("b", "1", "20Gi");
    reader.add(a.build());
    reader.add(b.build());
    assertThat(oldPod.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();
    Files.writeString(dir.resolve("mps/gpu-0/pipe/control"), ""); // as the started daemon does
    assertThat(newPod.unprepareResourceClaims(List.of(a.ref()))).containsEntry("u-a", "");
    assertThat(runner.lines()).anyMatch(l -> l.endsWith("nvidia-cuda-mps-control <<< quit"));
    runner.clear();

    assertThat(oldPod.prepareResourceClaims(List.of(b.ref())).get("u-b").error()).isEmpty();

    assertThat(runner.lines()).anyMatch(l -> l.endsWith("nvidia-cuda-mps-control -d"));
  }

  /**
   * The client limits are variables in the tenant's own container, which it can unset; the GPU's
   * daemon enforces the allocator's accounting as its server defaults. One daemon serves every
   * claim on the GPU, so it enforces the largest share among them: 1 share (25 %, 20Gi), then 2
   * shares (50 %, 40Gi) beside it.
   */
  @Test
  void theDaemonEnforcesTheLargestShareOfTheClaimsOnItsGpu() throws Exception {
    SimulatedNvidiaSmi gpu = new SimulatedNvidiaSmi();
    runner.answer(gpu);
    DeviceDriver d = driver(SharingSettings.Strategy.MPS);
    ClaimFixture a = shareOfGpu0("a", "1", "20Gi");
    ClaimFixture b = shareOfGpu0("b", "2", "40Gi");
    reader.add(a.build()).add(b.build());
    String pipe = dir.resolve("mps/gpu-0/pipe").toString();

    assertThat(d.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();
    assertThat(gpu.mpsDefaults(pipe))
        .containsEntry("active_thread_percentage", "25")
        .containsEntry("device_pinned_mem_limit 0", "20480M");
    assertThat(runner.lines())
        .contains(
            "CUDA_MPS_PIPE_DIRECTORY="
                + pipe
                + " nvidia-cuda-mps-control <<< set_default_active_thread_percentage 25",
            "CUDA_MPS_PIPE_DIRECTORY="
                + pipe
                + " nvidia-cuda-mps-control <<< set_default_device_pinned_mem_limit 0 20480M");

    assertThat(d.prepareResourceClaims(List.of(b.ref())).get("u-b").error()).isEmpty();
    assertThat(gpu.mpsDefaults(pipe))
        .containsEntry("active_thread_percentage", "50")
        .containsEntry("device_pinned_mem_limit 0", "40960M");
    // b's own client limits stay its share; a's container keeps its own
    assertThat(spec("u-b")).contains("\"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50\"");
    assertThat(spec("u-a")).contains("\"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25\"");
  }

  /**
   * A claim's MPS config sets its own client limits; the daemon still enforces the allocator's
   * accounting, which a tenant's config cannot raise.
   */
  @Test
  void aClaimsMpsConfigDoesNotRaiseWhatTheDaemonEnforces() throws Exception {
    SimulatedNvidiaSmi gpu = new SimulatedNvidiaSmi();
    runner.answer(gpu);
    DeviceDriver d = driver(SharingSettings.Strategy.MPS);
    ClaimFixture a =
        shareOfGpu0("a", "1", "20Gi")
            .config(
                "FromClaim",
                List.of(),
                gpuConfig(Map.of("strategy", "MPS", "mps", Map.of("activeThreadPercentage", 90))));
    reader.add(a.build());

    assertThat(d.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();

    assertThat(spec("u-a")).contains("\"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=90\"");
    assertThat(gpu.mpsDefaults(dir.resolve("mps/gpu-0/pipe").toString()))
        .containsEntry("active_thread_percentage", "25");
  }

  @Test
  void aClaimConfiguredForMpsKeepsItsOwnLimits() throws Exception {
    DeviceDriver d = driver(SharingSettings.Strategy.MPS);
    ClaimFixture a =
        shareOfGpu0("a", "1", "20Gi")
            .config(
                "FromClaim",
                List.of(),
                gpuConfig(Map.of("strategy", "MPS", "mps", Map.of("activeThreadPercentage", 10))));
    reader.add(a.build());

    assertThat(d.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();

    assertThat(spec("u-a"))
        .contains("\"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=10\"")
        .doesNotContain("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25")
        .contains("\"CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps\"");
  }

  @Test
  void mpsSharesOfTwoGpusInOneClaimAreRefusedNamingTheDevice() throws Exception {
    DeviceDriver d = driver(SharingSettings.Strategy.MPS);
    ClaimFixture a =
        claim("a")
            .uid("u-a")
            .share("gpu", "gpu-0", "00000000-0000-4000-8000-000000000001", Map.of("shares", "1"))
            .share("gpu", "gpu-1", "00000000-0000-4000-8000-000000000002", Map.of("shares", "1"));
    reader.add(a.build());

    PrepareResult r = d.prepareResourceClaims(List.of(a.ref())).get("u-a");

    assertThat(r.error())
        .contains("status.allocation.devices.results[1].device")
        .contains("/tmp/nvidia-mps");
  }

  private static ClaimFixture withInterval(ClaimFixture c, String interval) {
    return c.config(
        "FromClaim",
        List.of(),
        gpuConfig(Map.of("strategy", "TimeSlicing", "timeSlicing", Map.of("interval", interval))));
  }

  @Test
  void timeSlicingSetsTheClaimsIntervalAndResetsItAfterTheLastClaim() throws Exception {
    DeviceDriver d = driver(SharingSettings.Strategy.TIME_SLICING);
    ClaimFixture a = withInterval(shareOfGpu0("a", "1", "20Gi"), "Medium");
    ClaimFixture b = shareOfGpu0("b", "1", "20Gi"); // no interval: takes the GPU as it is
    reader.add(a.build());
    reader.add(b.build());

    assertThat(d.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();
    assertThat(d.prepareResourceClaims(List.of(b.ref())).get("u-b").error()).isEmpty();
    d.unprepareResourceClaims(List.of(a.ref()));
    d.unprepareResourceClaims(List.of(b.ref()));

    assertThat(runner.lines())
        .containsExactly(
            "nvidia-smi -i " + UUID0 + " -c DEFAULT",
            "nvidia-smi compute-policy -i " + UUID0 + " --set-timeslice 2",
            "nvidia-smi compute-policy -i " + UUID0 + " --set-timeslice 0");
  }

  @Test
  void aConflictingIntervalIsRefusedNamingTheFieldAndTheClaimHoldingTheGpu() throws Exception {
    DeviceDriver d = driver(SharingSettings.Strategy.TIME_SLICING);
    ClaimFixture a = withInterval(shareOfGpu0("a", "1", "20Gi"), "Short");
    ClaimFixture b = withInterval(shareOfGpu0("b", "1", "20Gi"), "Long");
    ClaimFixture c = withInterval(shareOfGpu0("c", "1", "20Gi"), "Short");
    reader.add(a.build());
    reader.add(b.build());
    reader.add(c.build());
    assertThat(d.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();
    runner.clear();

    String refused = d.prepareResourceClaims(List.of(b.ref())).get("u-b").error();
    // the same interval is no conflict, and is already set
    assertThat(d.prepareResourceClaims(List.of(c.ref())).get("u-c").error()).isEmpty();

    assertThat(refused)
        .contains(
            "status.allocation.devices.config[0].opaque.parameters.sharing.timeSlicing.interval")
        .contains("Long differs from Short")
        .contains("claim default/a (uid u-a)")
        .contains("device gpu-0");
    assertThat(runner.lines()).isEmpty();
    assertThat(Files.exists(dir.resolve("cdi/k8s.gpu.kdra.io-claim_u-b.json"))).isFalse();

    // once the claims holding Short are gone, the retried prepare sets Long
    d.unprepareResourceClaims(List.of(a.ref()));
    d.unprepareResourceClaims(List.of(c.ref()));
    runner.clear();
    assertThat(d.prepareResourceClaims(List.of(b.ref())).get("u-b").error()).isEmpty();
    assertThat(runner.lines())
        .containsExactly(
            "nvidia-smi -i " + UUID0 + " -c DEFAULT",
            "nvidia-smi compute-policy -i " + UUID0 + " --set-timeslice 3");
  }

  @Test
  void theIntervalOfAPreparedClaimStillHoldsAfterADriverRestart() throws Exception {
    Path checkpoint = dir.resolve("checkpoint.json");
    DeviceDriver before = driver(SharingSettings.Strategy.TIME_SLICING, checkpoint);
    ClaimFixture a = withInterval(shareOfGpu0("a", "1", "20Gi"), "Short");
    ClaimFixture b = withInterval(shareOfGpu0("b", "1", "20Gi"), "Medium");
    reader.add(a.build());
    reader.add(b.build());
    assertThat(before.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();
    before.close();
    drivers.remove(before);

    DeviceDriver after = driver(SharingSettings.Strategy.TIME_SLICING, checkpoint);
    after.restore();

    assertThat(after.prepareResourceClaims(List.of(b.ref())).get("u-b").error())
        .contains("Medium differs from Short")
        .contains("claim default/a (uid u-a)");
  }

  @Test
  void aClaimAskingForAnIntervalSetsItWhereTheGpusClaimsAskedForNone() throws Exception {
    DeviceDriver d = driver(SharingSettings.Strategy.TIME_SLICING);
    ClaimFixture a = shareOfGpu0("a", "1", "20Gi");
    ClaimFixture b = withInterval(shareOfGpu0("b", "1", "20Gi"), "Long");
    reader.add(a.build());
    reader.add(b.build());

    assertThat(d.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();
    assertThat(d.prepareResourceClaims(List.of(b.ref())).get("u-b").error()).isEmpty();

    assertThat(runner.lines())
        .containsExactly(
            "nvidia-smi -i " + UUID0 + " -c DEFAULT",
            "nvidia-smi compute-policy -i " + UUID0 + " --set-timeslice 0",
            "nvidia-smi compute-policy -i " + UUID0 + " --set-timeslice 3");
  }

  @Test
  void twoMpsSharesOfOneGpuInOneClaimGetTheSumOfTheirLimits() throws Exception {
    DeviceDriver d = driver(SharingSettings.Strategy.MPS);
    ClaimFixture a =
        claim("a")
            .uid("u-a")
            .share(
                "x",
                "gpu-0",
                "00000000-0000-4000-8000-000000000001",
                Map.of("shares", "1", "memory", "20Gi"))
            .share(
                "y",
                "gpu-0",
                "00000000-0000-4000-8000-000000000002",
                Map.of("shares", "2", "memory", "30Gi"));
    reader.add(a.build());

    assertThat(d.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();

    // 1 + 2 of 4 shares, 20Gi + 30Gi: the claim's processes use both shares at once
    assertThat(spec("u-a"))
        .contains("\"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=75\"")
        .contains("\"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=51200M\"")
        .doesNotContain("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25");
    assertThat(runner.lines()).filteredOn(l -> l.endsWith("-d")).hasSize(1);
  }

  @Test
  void twoSharesOfOneGpuWithDifferentConfigsAreRefusedNamingBoth() throws Exception {
    DeviceDriver d = driver(SharingSettings.Strategy.TIME_SLICING);
    ClaimFixture a =
        claim("a")
            .uid("u-a")
            .share("x", "gpu-0", "00000000-0000-4000-8000-000000000001", Map.of("shares", "1"))
            .share("y", "gpu-0", "00000000-0000-4000-8000-000000000002", Map.of("shares", "1"))
            .config(
                "FromClaim",
                List.of("x"),
                gpuConfig(
                    Map.of("strategy", "TimeSlicing", "timeSlicing", Map.of("interval", "Short"))))
            .config(
                "FromClaim",
                List.of("y"),
                gpuConfig(
                    Map.of("strategy", "TimeSlicing", "timeSlicing", Map.of("interval", "Long"))));
    reader.add(a.build());

    String error = d.prepareResourceClaims(List.of(a.ref())).get("u-a").error();

    assertThat(error)
        .contains("status.allocation.devices.results[1].request")
        .contains("request \"y\" shares device \"gpu-0\" with request \"x\"")
        .contains("TimeSlicing, interval Long against TimeSlicing, interval Short");
    assertThat(runner.lines()).isEmpty();
  }

  @Test
  void twoSharesOfOneGpuInOneClaimAreOneCdiDevice() throws Exception {
    DeviceDriver d = driver(SharingSettings.Strategy.TIME_SLICING);
    ClaimFixture a =
        claim("a")
            .uid("u-a")
            .share("x", "gpu-0", "00000000-0000-4000-8000-000000000001", Map.of("shares", "1"))
            .share("y", "gpu-0", "00000000-0000-4000-8000-000000000002", Map.of("shares", "1"));
    reader.add(a.build());

    PrepareResult r = d.prepareResourceClaims(List.of(a.ref())).get("u-a");

    assertThat(r.error()).isEmpty();
    assertThat(r.devices())
        .hasSize(2)
        .allSatisfy(
            dev ->
                assertThat(dev.cdiDeviceIds()).containsExactly("k8s.gpu.kdra.io/claim=u-a-gpu-0"));
    assertThat(spec("u-a").split("\"name\" : \"u-a-gpu-0\"", -1)).hasSize(2);
  }

  /**
   * The driver container died and took its MPS daemon along; the daemon's control socket file
   * stayed on the host path. A new claim gets a daemon started afresh (not the dead pipe), and the
   * last unprepare of a daemon that is gone again succeeds instead of failing for good.
   */
  @Test
  void aStaleControlSocketWithoutADaemonGetsAFreshDaemonAndTheLastUnprepareSucceeds()
      throws Exception {
    SimulatedNvidiaSmi gpu = new SimulatedNvidiaSmi();
    runner.answer(gpu);
    Path pipe = dir.resolve("mps/gpu-0/pipe");
    Files.createDirectories(pipe);
    Files.writeString(pipe.resolve("control"), ""); // left by a daemon that died
    DeviceDriver d = driver(SharingSettings.Strategy.MPS);
    ClaimFixture a = shareOfGpu0("a", "1", "20Gi");
    reader.add(a.build());

    assertThat(d.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();
    assertThat(gpu.mpsDaemons()).containsExactly(pipe.toString());

    gpu.killMpsDaemons();
    runner.clear();
    assertThat(d.unprepareResourceClaims(List.of(a.ref())).get("u-a")).isEmpty();
    assertThat(runner.lines()).contains("nvidia-smi -i " + UUID0 + " -c DEFAULT");
    assertThat(pipe.resolve("control")).doesNotExist();
  }

  /**
   * A daemon dies while this driver process keeps running: the old pod of a rolling update exits
   * and takes along the daemon it started and this pod adopted (or the daemon crashed). The next
   * claim on the GPU gets a daemon started again, not the dead pipe this process remembers.
   */
  @Test
  void aDaemonThatDiedUnderARunningDriverIsStartedAgainForTheNextClaim() throws Exception {
    SimulatedNvidiaSmi gpu = new SimulatedNvidiaSmi();
    runner.answer(gpu);
    ClaimFixture a = shareOfGpu0("a", "1", "20Gi");
    ClaimFixture b = shareOfGpu0("b", "1", "20Gi");
    reader.add(a.build()).add(b.build());
    DeviceDriver d = driver(SharingSettings.Strategy.MPS);
    assertThat(d.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();

    gpu.killMpsDaemons();
    assertThat(d.prepareResourceClaims(List.of(b.ref())).get("u-b").error()).isEmpty();

    Path pipe = dir.resolve("mps/gpu-0/pipe");
    assertThat(gpu.mpsDaemons()).containsExactly(pipe.toString());
    assertThat(d.unprepareResourceClaims(List.of(a.ref(), b.ref())).values()).containsOnly("");
    assertThat(gpu.mpsDaemons()).isEmpty();
  }

  private static ClaimFixture shareOfGpu(int gpu, String namespace, String name) {
    return claim(name)
        .namespace(namespace)
        .uid("u-" + name)
        .share(
            "gpu",
            "gpu-" + gpu,
            "00000000-0000-4000-8000-0000000000" + (10 + name.charAt(0) % 90),
            Map.of("shares", "1", "memory", "20Gi"));
  }

  /**
   * MPS clients share the node's one /dev/shm directory: while claims of one namespace use MPS on
   * the node, a claim of another is refused, on any of its GPUs, with the reason and the setting
   * that allows it; it is prepared once the first namespace's claims are unprepared.
   */
  @Test
  void anMpsClaimOfASecondNamespaceIsRefusedUntilTheFirstNamespacesClaimsAreGone()
      throws Exception {
    SimulatedNvidiaSmi gpu = new SimulatedNvidiaSmi();
    runner.answer(gpu);
    ClaimFixture a = shareOfGpu(0, "team-a", "a");
    ClaimFixture a2 = shareOfGpu(0, "team-a", "c");
    ClaimFixture b = shareOfGpu(1, "team-b", "b");
    reader.add(a.build()).add(a2.build()).add(b.build());
    DeviceDriver d = driver(SharingSettings.Strategy.MPS);
    assertThat(d.prepareResourceClaims(List.of(a.ref(), a2.ref())).values())
        .allMatch(r -> r.error().isEmpty());

    String refused = d.prepareResourceClaims(List.of(b.ref())).get("u-b").error();

    assertThat(refused)
        .contains("device gpu-1")
        .contains("team-a/")
        .contains("not of namespace team-b")
        .contains("/dev/shm")
        .contains("deviceDriver.config.sharing.mps-across-namespaces");
    assertThat(gpu.mpsDaemons()).containsExactly(dir.resolve("mps/gpu-0/pipe").toString());
    assertThat(d.prepared()).doesNotContainKey("u-b");

    assertThat(d.unprepareResourceClaims(List.of(a.ref(), a2.ref())).values()).containsOnly("");
    assertThat(d.prepareResourceClaims(List.of(b.ref())).get("u-b").error()).isEmpty();
  }

  @Test
  void aNodeThatAllowsMpsAcrossNamespacesPreparesClaimsOfBoth() throws Exception {
    ClaimFixture a = shareOfGpu(0, "team-a", "a");
    ClaimFixture b = shareOfGpu(0, "team-b", "b");
    reader.add(a.build()).add(b.build());
    DeviceDriver d =
        driver(
            new SharingSettings(
                SharingSettings.Strategy.MPS, 4, Quantity.parse("1Gi"), dir.resolve("mps"), true),
            dir.resolve("checkpoint.json"));

    assertThat(d.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();
    assertThat(d.prepareResourceClaims(List.of(b.ref())).get("u-b").error()).isEmpty();
  }

  /** A restarted driver uses the daemon its predecessor started, and stops it once. */
  @Test
  void aRestartedDriverAdoptsTheRunningDaemonOfItsPreparedClaims() throws Exception {
    SimulatedNvidiaSmi gpu = new SimulatedNvidiaSmi();
    runner.answer(gpu);
    ClaimFixture a = shareOfGpu0("a", "1", "20Gi");
    ClaimFixture b = shareOfGpu0("b", "1", "20Gi");
    reader.add(a.build()).add(b.build());
    DeviceDriver old = driver(SharingSettings.Strategy.MPS);
    assertThat(old.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();
    old.close();

    DeviceDriver fresh = driver(SharingSettings.Strategy.MPS);
    assertThat(fresh.restore()).isEqualTo(1);
    assertThat(fresh.prepareResourceClaims(List.of(b.ref())).get("u-b").error()).isEmpty();
    assertThat(runner.lines()).filteredOn(l -> l.endsWith(" -d")).hasSize(1);
    assertThat(fresh.unprepareResourceClaims(List.of(a.ref(), b.ref())).values()).containsOnly("");

    assertThat(gpu.mpsDaemons()).isEmpty();
    assertThat(runner.lines()).filteredOn(l -> l.endsWith("<<< quit")).hasSize(1);
  }

  /**
   * At start, a daemon no prepared claim uses is stopped, and the daemon of a prepared claim that
   * died with the old driver container is started again, for its containers' new processes.
   */
  @Test
  void aRestartedDriverStopsOrphanedDaemonsAndRestartsThoseItsClaimsNeed() throws Exception {
    SimulatedNvidiaSmi gpu = new SimulatedNvidiaSmi();
    runner.answer(gpu);
    ClaimFixture a = shareOfGpu0("a", "1", "20Gi");
    reader.add(a.build());
    DeviceDriver old = driver(SharingSettings.Strategy.MPS);
    assertThat(old.prepareResourceClaims(List.of(a.ref())).get("u-a").error()).isEmpty();
    old.close();
    gpu.killMpsDaemons(); // the container died; gpu-0's control file stays
    Path orphan = dir.resolve("mps/gpu-1/pipe");
    runner.run(
        new CommandRunner.Command(
            List.of("nvidia-cuda-mps-control", "-d"),
            Map.of("CUDA_MPS_PIPE_DIRECTORY", orphan.toString()),
            ""));
    runner.clear();

    DeviceDriver fresh = driver(SharingSettings.Strategy.MPS);
    fresh.restore();

    assertThat(gpu.mpsDaemons()).containsExactly(dir.resolve("mps/gpu-0/pipe").toString());
    // the new daemon enforces the prepared claim's share (read back from its CDI spec)
    assertThat(gpu.mpsDefaults(dir.resolve("mps/gpu-0/pipe").toString()))
        .containsEntry("active_thread_percentage", "25")
        .containsEntry("device_pinned_mem_limit 0", "20480M");
    assertThat(runner.lines())
        .contains("CUDA_MPS_PIPE_DIRECTORY=" + orphan + " nvidia-cuda-mps-control <<< quit");
    assertThat(fresh.unprepareResourceClaims(List.of(a.ref())).get("u-a")).isEmpty();
    assertThat(gpu.mpsDaemons()).isEmpty();
  }

  @Test
  void aFailingCommandFailsThePrepareWithTheCommandAndKeepsNothing() throws Exception {
    DeviceDriver d = driver(SharingSettings.Strategy.TIME_SLICING);
    runner.answer(c -> new CommandRunner.Output(6, "Unable to set the compute policy"));
    ClaimFixture a = shareOfGpu0("a", "1", "20Gi");
    reader.add(a.build());

    PrepareResult r = d.prepareResourceClaims(List.of(a.ref())).get("u-a");

    assertThat(r.error())
        .contains("device gpu-0")
        .contains("nvidia-smi -i " + UUID0 + " -c DEFAULT")
        .contains("exited with 6: Unable to set the compute policy");
    assertThat(Files.exists(dir.resolve("cdi/k8s.gpu.kdra.io-claim_u-a.json"))).isFalse();
  }
}
