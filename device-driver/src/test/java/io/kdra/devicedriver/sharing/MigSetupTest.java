package io.kdra.devicedriver.sharing;

import static io.kdra.devicedriver.testing.ClaimFixture.claim;
import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.config.SharingConfig;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.MigMode;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.discovery.NvidiaBackend;
import io.kdra.devicedriver.plugin.PrepareResult;
import io.kdra.devicedriver.prepare.CdiSpecStore;
import io.kdra.devicedriver.prepare.CheckpointStore;
import io.kdra.devicedriver.prepare.ClaimTelemetry;
import io.kdra.devicedriver.prepare.DeviceDriver;
import io.kdra.devicedriver.prepare.DeviceSetup;
import io.kdra.devicedriver.prepare.PreparePlanner;
import io.kdra.devicedriver.testing.ClaimFixture;
import io.kdra.devicedriver.testing.FakeClaimReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Prepare and unprepare of MIG partitions through the driver, with the commands recorded. */
class MigSetupTest {
  private static final String UUID = "GPU-4b0c2b8e-6f6e-4a8e-9d0e-3c1f2a7b9e01";

  @TempDir Path dir;
  private final FakeClaimReader reader = new FakeClaimReader();
  private final List<DeviceDriver> drivers = new ArrayList<>();

  static String sample(String name) {
    try (InputStream in = MigSetupTest.class.getResourceAsStream("/nvidia-smi/mig/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private DeviceDriver driver(MigMode mode, RecordingCommandRunner runner) throws Exception {
    return driver(mode, runner, DeviceDriver.PrepareInterlude.NONE);
  }

  private DeviceDriver driver(
      MigMode mode, RecordingCommandRunner runner, DeviceDriver.PrepareInterlude interlude)
      throws Exception {
    return driver(mode, runner, interlude, dir.resolve("serialize.lock"));
  }

  private DeviceDriver driver(
      MigMode mode,
      RecordingCommandRunner runner,
      DeviceDriver.PrepareInterlude interlude,
      Path lockFile)
      throws Exception {
    Inventory inv =
        NvidiaBackend.inventory(
            sample("a100-40gb.csv"),
            dir.resolve("host"),
            mode,
            new NvidiaBackend.MigTables(
                sample("a100-40gb-lgip.txt"),
                mode == MigMode.DYNAMIC ? sample("a100-40gb-lgipp.txt") : "",
                mode == MigMode.STATIC ? sample("a100-40gb-lgi.txt") : ""));
    DeviceDriver d =
        new DeviceDriver(
            new PreparePlanner(
                ClaimFixture.DRIVER,
                ClaimFixture.NODE,
                new MigSetup(mode, runner, "nvidia-smi", dir.resolve("host"))),
            reader,
            () -> inv,
            new CdiSpecStore(dir.resolve("cdi")),
            CheckpointStore.open(dir.resolve("checkpoint.json"), Clock.systemUTC()),
            ClaimTelemetry.NONE,
            Clock.systemUTC(),
            2,
            interlude,
            lockFile);
    drivers.add(d);
    return d;
  }

  @AfterEach
  void close() {
    drivers.forEach(DeviceDriver::close);
  }

  private String spec(String uid) throws Exception {
    return Files.readString(dir.resolve("cdi").resolve("k8s.gpu.kdra.io-claim_" + uid + ".json"));
  }

  @Test
  void dynamicCreatesTheInstanceAtItsPlacementAndDestroysItOnUnprepare() throws Exception {
    RecordingCommandRunner runner = new RecordingCommandRunner().answer(new SimulatedNvidiaSmi());
    DeviceDriver d = driver(MigMode.DYNAMIC, runner);
    Files.createDirectories(dir.resolve("host/proc/driver/nvidia-caps"));
    Files.writeString(
        dir.resolve("host/proc/driver/nvidia-caps/mig-minors"),
        "config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\ngpu0/gi2/access 21\n");
    ClaimFixture c = claim("job").uid("u1").result("slice", "gpu-0-mig-3g20gb-4");
    reader.add(c.build());

    PrepareResult r = d.prepareResourceClaims(List.of(c.ref())).get("u1");

    assertThat(r.error()).isEmpty();
    assertThat(runner.lines())
        .containsExactly(
            "nvidia-smi mig -i 0 -lgi",
            "nvidia-smi mig -i 0 -cgi 9:4 -C",
            "nvidia-smi mig -i 0 -gi 1 -lci");
    assertThat(spec("u1"))
        .contains("\"KDRA_MIG_PROFILE=3g.20gb\"")
        .contains("\"KDRA_MIG_DEVICE=MIG-" + UUID + "/1/0\"")
        .contains("/dev/nvidia-caps/nvidia-cap12")
        .contains("/dev/nvidia-caps/nvidia-cap13")
        .doesNotContain("nvidia-cap21");

    runner.clear();
    assertThat(d.unprepareResourceClaims(List.of(c.ref())).get("u1")).isEmpty();
    assertThat(runner.lines())
        .containsExactly(
            "nvidia-smi mig -i 0 -lgi",
            "nvidia-smi mig -i 0 -gi 1 -lci",
            "nvidia-smi mig -i 0 -gi 1 -dci",
            "nvidia-smi mig -i 0 -gi 1 -dgi");
  }

  /**
   * The driver dies after creating a partition's instance and before the claim's checkpoint entry
   * (here: its prepare never returns), and the claim is then deleted, so no unprepare will come.
   * The successor destroys the instance at start: the instances on the GPU are those of
   * checkpointed claims, and nothing else.
   */
  @Test
  void anInstanceCreatedByAPrepareThatNeverReachedTheCheckpointIsDestroyedAtRestart()
      throws Exception {
    SimulatedNvidiaSmi gpu = new SimulatedNvidiaSmi();
    RecordingCommandRunner runner = new RecordingCommandRunner().answer(gpu);
    ClaimFixture kept = claim("kept").uid("u1").result("slice", "gpu-0-mig-2g10gb-2");
    ClaimFixture lost = claim("lost").uid("u2").result("slice", "gpu-0-mig-3g20gb-4");
    reader.add(kept.build()).add(lost.build());
    CountDownLatch inWindow = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    DeviceDriver dying =
        driver(
            MigMode.DYNAMIC,
            runner,
            ref -> {
              if (ref.uid().equals("u2")) {
                inWindow.countDown();
                never.await();
              }
            },
            // a killed process's file lock is released by the kernel; a thread blocked forever is
            // not killed, so the dying driver locks a file of its own
            dir.resolve("killed-process.lock"));
    assertThat(dying.prepareResourceClaims(List.of(kept.ref())).get("u1").error()).isEmpty();
    Thread call = new Thread(() -> dying.prepareResourceClaims(List.of(lost.ref())));
    call.setDaemon(true);
    call.start();
    assertThat(inWindow.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(gpuInstances(runner)).hasSize(2);

    DeviceDriver successor = driver(MigMode.DYNAMIC, runner);
    assertThat(successor.restore()).isEqualTo(1);

    assertThat(gpuInstances(runner)).as("only the checkpointed claim's instance").hasSize(1);
    assertThat(spec("u1")).contains("KDRA_MIG_PROFILE=2g.10gb");
    assertThat(successor.unprepareResourceClaims(List.of(kept.ref())).get("u1")).isEmpty();
    assertThat(gpuInstances(runner)).isEmpty();
    // the dying driver stays blocked (a daemon worker): it must not write after the test
  }

  /** The GPU instances the simulated GPU holds, one line each. */
  private static List<String> gpuInstances(RecordingCommandRunner runner) throws Exception {
    return runner
        .run(CommandRunner.Command.of("nvidia-smi", "mig", "-i", "0", "-lgi"))
        .text()
        .lines()
        .filter(l -> l.startsWith("|"))
        .toList();
  }

  @Test
  void dynamicReusesAnInstanceAPreviousAttemptCreated() throws Exception {
    SimulatedNvidiaSmi gpu = new SimulatedNvidiaSmi();
    RecordingCommandRunner runner = new RecordingCommandRunner().answer(gpu);
    // a prepare that crashed after creating the instance, before its checkpoint entry
    runner.run(CommandRunner.Command.of("nvidia-smi", "mig", "-i", "0", "-cgi", "14:2", "-C"));
    runner.clear();
    DeviceDriver d = driver(MigMode.DYNAMIC, runner);
    ClaimFixture c = claim("job").uid("u1").result("slice", "gpu-0-mig-2g10gb-2");
    reader.add(c.build());

    assertThat(d.prepareResourceClaims(List.of(c.ref())).get("u1").error()).isEmpty();

    assertThat(runner.lines())
        .containsExactly("nvidia-smi mig -i 0 -lgi", "nvidia-smi mig -i 0 -gi 1 -lci");
  }

  @Test
  void staticUsesTheExistingInstanceAndNeverCreatesOrDestroys() throws Exception {
    RecordingCommandRunner runner =
        new RecordingCommandRunner()
            .answer(
                cmd ->
                    cmd.argv().contains("-lgi")
                        ? new CommandRunner.Output(0, sample("a100-40gb-lgi.txt"))
                        : new CommandRunner.Output(
                            0,
                            sample("a100-40gb-lci.txt")
                                .replace(
                                    "|   0      1       MIG 3g.20gb          2",
                                    "|   0      5       MIG 2g.10gb          1")));
    DeviceDriver d = driver(MigMode.STATIC, runner);
    ClaimFixture c = claim("job").uid("u1").result("slice", "gpu-0-mig-2g10gb-4");
    reader.add(c.build());

    assertThat(d.prepareResourceClaims(List.of(c.ref())).get("u1").error()).isEmpty();
    assertThat(spec("u1")).contains("\"KDRA_MIG_DEVICE=MIG-" + UUID + "/5/0\"");
    assertThat(d.unprepareResourceClaims(List.of(c.ref())).get("u1")).isEmpty();

    assertThat(runner.lines())
        .containsExactly("nvidia-smi mig -i 0 -lgi", "nvidia-smi mig -i 0 -gi 5 -lci");
  }

  @Test
  void staticFailsNamingTheInstanceWhenAnAdminRemovedIt() throws Exception {
    RecordingCommandRunner runner =
        new RecordingCommandRunner()
            .answer(cmd -> new CommandRunner.Output(0, "No GPU instances found: Not Found"));
    DeviceDriver d = driver(MigMode.STATIC, runner);
    ClaimFixture c = claim("job").uid("u1").result("slice", "gpu-0-mig-3g20gb-0");
    reader.add(c.build());

    PrepareResult r = d.prepareResourceClaims(List.of(c.ref())).get("u1");

    assertThat(r.error())
        .contains("device gpu-0-mig-3g20gb-0")
        .contains("GPU instance 1 of GPU 0 no longer exists");
  }

  @Test
  void releaseByAClaimThatIsNotTheLastUserKeepsTheInstance() throws Exception {
    SimulatedNvidiaSmi gpu = new SimulatedNvidiaSmi();
    RecordingCommandRunner runner = new RecordingCommandRunner().answer(gpu);
    MigSetup setup = new MigSetup(MigMode.DYNAMIC, runner, "nvidia-smi", dir.resolve("host"));
    NodeDevice partition = partition(MigMode.DYNAMIC, "gpu-0-mig-3g20gb-4");
    setup.prepare(new DeviceSetup.Allocated("u1", partition, SharingConfig.EXCLUSIVE, Map.of()));
    runner.clear();

    setup.release(partition, false);

    assertThat(runner.lines()).noneMatch(l -> l.endsWith("-dgi") || l.endsWith("-dci"));
    setup.release(partition, true);
    assertThat(runner.lines()).contains("nvidia-smi mig -i 0 -gi 1 -dgi");
  }

  /**
   * adminAccess may allocate a partition a regular claim is using (admin results hold nothing): the
   * admin claim neither creates an instance nor, when it goes, destroys the regular claim's.
   */
  @Test
  void anAdminAccessClaimOnAnInUsePartitionLeavesItsInstanceAlone() throws Exception {
    RecordingCommandRunner runner = new RecordingCommandRunner().answer(new SimulatedNvidiaSmi());
    DeviceDriver d = driver(MigMode.DYNAMIC, runner);
    ClaimFixture job = claim("job").uid("u1").result("slice", "gpu-0-mig-3g20gb-4");
    ClaimFixture admin =
        claim("monitor").uid("u2").result("slice", "gpu-0-mig-3g20gb-4").adminAccess();
    reader.add(job.build()).add(admin.build());
    assertThat(d.prepareResourceClaims(List.of(job.ref())).get("u1").error()).isEmpty();
    runner.clear();

    assertThat(d.prepareResourceClaims(List.of(admin.ref())).get("u2").error()).isEmpty();
    assertThat(d.unprepareResourceClaims(List.of(admin.ref())).get("u2")).isEmpty();

    assertThat(runner.lines()).noneMatch(l -> l.contains("-cgi") || l.contains("-d"));
    assertThat(spec("u1")).contains("KDRA_MIG_DEVICE=MIG-" + UUID + "/1/0");
    runner.clear();
    assertThat(d.unprepareResourceClaims(List.of(job.ref())).get("u1")).isEmpty();
    assertThat(runner.lines())
        .contains("nvidia-smi mig -i 0 -gi 1 -dci", "nvidia-smi mig -i 0 -gi 1 -dgi");
  }

  /** The regular claim goes first: the partition's last regular user destroys the instance. */
  @Test
  void theLastRegularUserDestroysTheInstanceWhileAnAdminClaimStillHoldsThePartition()
      throws Exception {
    RecordingCommandRunner runner = new RecordingCommandRunner().answer(new SimulatedNvidiaSmi());
    DeviceDriver d = driver(MigMode.DYNAMIC, runner);
    ClaimFixture job = claim("job").uid("u1").result("slice", "gpu-0-mig-3g20gb-4");
    ClaimFixture admin =
        claim("monitor").uid("u2").result("slice", "gpu-0-mig-3g20gb-4").adminAccess();
    reader.add(job.build()).add(admin.build());
    assertThat(d.prepareResourceClaims(List.of(job.ref(), admin.ref())).values())
        .allSatisfy(r -> assertThat(r.error()).isEmpty());
    runner.clear();

    assertThat(d.unprepareResourceClaims(List.of(job.ref())).get("u1")).isEmpty();

    assertThat(runner.lines()).contains("nvidia-smi mig -i 0 -gi 1 -dgi");
  }

  @Test
  void involvesPartitionsOnlyWhileMigIsOn() throws Exception {
    NodeDevice partition = partition(MigMode.DYNAMIC, "gpu-0-mig-3g20gb-4");
    NodeDevice whole = io.kdra.devicedriver.testing.Inventories.gpus(1).devices().get(0);
    RecordingCommandRunner runner = new RecordingCommandRunner();
    Path host = dir.resolve("host");

    assertThat(new MigSetup(MigMode.DYNAMIC, runner, "nvidia-smi", host).involves(partition))
        .isTrue();
    assertThat(new MigSetup(MigMode.STATIC, runner, "nvidia-smi", host).involves(partition))
        .isTrue();
    assertThat(new MigSetup(MigMode.OFF, runner, "nvidia-smi", host).involves(partition)).isFalse();
    assertThat(new MigSetup(MigMode.DYNAMIC, runner, "nvidia-smi", host).involves(whole)).isFalse();
  }

  private NodeDevice partition(MigMode mode, String name) throws Exception {
    return NvidiaBackend.inventory(
            sample("a100-40gb.csv"),
            dir.resolve("host"),
            mode,
            new NvidiaBackend.MigTables(
                sample("a100-40gb-lgip.txt"), sample("a100-40gb-lgipp.txt"), ""))
        .device(name)
        .orElseThrow();
  }
}
