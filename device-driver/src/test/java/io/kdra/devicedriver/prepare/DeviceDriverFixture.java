package io.kdra.devicedriver.prepare;

import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.testing.ClaimFixture;
import io.kdra.devicedriver.testing.FakeClaimReader;
import io.kdra.devicedriver.testing.Inventories;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link DeviceDriverTest} and {@link NodeStateRecoveryTest} share: drivers over one node's
 * directories (each closed after the test), a fake API and a recording device setup.
 */
abstract class DeviceDriverFixture {
  @TempDir Path dir;
  final FakeClaimReader reader = new FakeClaimReader();
  final List<DeviceDriver> drivers = new ArrayList<>();
  Inventory inventory = Inventories.gpus(8);

  DeviceDriver driver() throws Exception {
    return driver(DeviceDriver.PrepareInterlude.NONE);
  }

  DeviceDriver driver(DeviceDriver.PrepareInterlude interlude) throws Exception {
    return driver(interlude, DeviceSetup.NONE);
  }

  DeviceDriver driver(DeviceDriver.PrepareInterlude interlude, DeviceSetup setup) throws Exception {
    return driver(interlude, setup, dir.resolve("plugin/serialize.lock"));
  }

  DeviceDriver driver(DeviceDriver.PrepareInterlude interlude, DeviceSetup setup, Path lockFile)
      throws Exception {
    DeviceDriver d =
        new DeviceDriver(
            new PreparePlanner(ClaimFixture.DRIVER, ClaimFixture.NODE, setup),
            reader,
            () -> inventory,
            new CdiSpecStore(dir.resolve("cdi")),
            CheckpointStore.open(dir.resolve("plugin/checkpoint.json"), Clock.systemUTC()),
            ClaimTelemetry.NONE,
            Clock.systemUTC(),
            4,
            interlude,
            lockFile);
    drivers.add(d);
    return d;
  }

  @AfterEach
  void close() {
    drivers.forEach(DeviceDriver::close);
  }

  List<String> cdiFiles() throws Exception {
    Path cdi = dir.resolve("cdi");
    if (!Files.exists(cdi)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(cdi)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  /** Records what it is asked to do; refuses to set up the devices named in {@code failing}. */
  static class RecordingSetup implements DeviceSetup {
    final List<String> calls = new ArrayList<>();
    final Set<String> failing;

    RecordingSetup(String... failing) {
      this.failing = Set.of(failing);
    }

    @Override
    public DeviceEdits prepare(Allocated device) throws PrepareException {
      calls.add("prepare " + device.device().name());
      if (failing.contains(device.device().name())) {
        throw new PrepareException("device", "cannot set up " + device.device().name());
      }
      return DeviceEdits.NONE;
    }

    @Override
    public void release(NodeDevice device, boolean lastUser) {
      calls.add("release " + device.name() + (lastUser ? " last" : " shared"));
    }
  }
}
