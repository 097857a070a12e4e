package io.kdra.devicedriver.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class SimulatedBackendTest {
  @TempDir Path dir;

  private static final String TWO =
      """
      devices:
      - name: gpu-1
        attributes: {index: 1, productName: Sim, driverVersion: {version: 1.2.3}, shared: true}
        capacity: {memory: 40Gi}
        consumesCounters: [{counterSet: mem, counters: {memory: 40Gi}}]
        deviceNodes: [/dev/null]
      - name: gpu-0
        health: Unhealthy
        healthMessage: fell off the bus
      sharedCounters: [{name: mem, counters: {memory: 80Gi}}]
      """;

  @Test
  void builtInInventoryWithoutAFile() throws Exception {
    Inventory inv = new SimulatedBackend(dir.resolve("absent.yaml")).discover();
    assertThat(inv.devices()).hasSize(8);
    assertThat(inv.device("gpu-0").orElseThrow().attributes())
        .containsEntry("productName", new AttributeValue.StringValue("NVIDIA H100 80GB HBM3"));
  }

  @Test
  void parsesTypesCountersAndHealthAndReloadsOnChange() throws Exception {
    Path file = dir.resolve("inv.yaml");
    Files.writeString(file, TWO);
    SimulatedBackend b = new SimulatedBackend(file);
    Inventory inv = b.discover();
    assertThat(inv.devices()).extracting(NodeDevice::name).containsExactly("gpu-0", "gpu-1");
    NodeDevice g1 = inv.device("gpu-1").orElseThrow();
    assertThat(g1.attributes())
        .containsEntry("index", new AttributeValue.IntValue(1))
        .containsEntry("shared", new AttributeValue.BoolValue(true))
        .containsKey("driverVersion");
    assertThat(g1.consumesCounters().get(0).counters())
        .containsEntry("memory", Quantity.parse("40Gi"));
    assertThat(inv.sharedCounters()).extracting(CounterSet::name).containsExactly("mem");
    assertThat(inv.device("gpu-0").orElseThrow().health()).isEqualTo(NodeDevice.Health.UNHEALTHY);

    Files.writeString(file, TWO.replace("health: Unhealthy", "health: Healthy"));
    Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() + 5000));
    assertThat(b.discover().device("gpu-0").orElseThrow().health())
        .isEqualTo(NodeDevice.Health.HEALTHY);
  }

  record Bad(String yaml, String message) {}

  static Stream<Named<Bad>> bad() {
    return Stream.of(
        Named.of(
            "unknown device field",
            new Bad("devices: [{name: a, colour: red}]", "devices[0].colour: unknown field")),
        Named.of(
            "missing name", new Bad("devices: [{attributes: {}}]", "devices[0].name: is required")),
        Named.of(
            "bad health",
            new Bad(
                "devices: [{name: a, health: Meh}]",
                "devices[0].health: \"Meh\" is not Healthy or Unhealthy")),
        Named.of(
            "bad quantity",
            new Bad(
                "devices: [{name: a, capacity: {memory: lots}}]",
                "devices[0].capacity.memory: \"lots\" is not a quantity")),
        Named.of(
            "bad version",
            new Bad(
                "devices: [{name: a, attributes: {v: {version: x}}}]",
                "devices[0].attributes.v.version: \"x\" is not semver")),
        Named.of(
            "list attribute",
            new Bad(
                "devices: [{name: a, attributes: {v: [1]}}]",
                "devices[0].attributes.v: must be an int, bool, string")),
        Named.of(
            "duplicate name",
            new Bad("devices: [{name: a}, {name: a}]", "duplicate device name a")),
        Named.of("unknown top-level key", new Bad("device: []", "device: unknown field")),
        Named.of(
            "a disk as a device node",
            new Bad(
                "devices: [{name: a, deviceNodes: [/dev/null, /dev/sda]}]",
                "devices[0].deviceNodes[1]: \"/dev/sda\" is not one of the harmless device nodes"
                    + " a simulated device may have (/dev/null, ")),
        Named.of(
            "a path out of /dev",
            new Bad(
                "devices: [{name: a, deviceNodes: [/dev/../dev/mem]}]",
                "devices[0].deviceNodes[0]: \"/dev/../dev/mem\" is not one of")),
        Named.of(
            "memory as a common device node",
            new Bad(
                "devices: [{name: a}]\ncommonDeviceNodes: [/dev/mem]",
                "commonDeviceNodes[0]: \"/dev/mem\" is not one of the harmless device nodes")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bad")
  void refusesNamingFileAndPath(Bad b) throws Exception {
    Path file = dir.resolve("inv.yaml");
    Files.writeString(file, b.yaml());
    assertThatThrownBy(() -> new SimulatedBackend(file).discover())
        .isInstanceOf(DiscoveryException.class)
        .hasMessageStartingWith(file.toString())
        .hasMessageContaining(b.message());
  }

  @Test
  void acceptsTheHarmlessDeviceNodesAndAnyWithTheFlag() throws Exception {
    Path file = dir.resolve("inv.yaml");
    Files.writeString(
        file,
        "devices: [{name: a, deviceNodes: [/dev/null, /dev/zero, /dev/fuse, /dev/vsock,"
            + " /dev/hwrng]}]\ncommonDeviceNodes: [/dev/urandom]\n");
    assertThat(new SimulatedBackend(file).discover().device("a").orElseThrow().deviceNodes())
        .containsExactly("/dev/null", "/dev/zero", "/dev/fuse", "/dev/vsock", "/dev/hwrng");

    Files.writeString(file, "devices: [{name: a, deviceNodes: [/dev/sda]}]\n");
    assertThat(new SimulatedBackend(file, true).discover().device("a").orElseThrow().deviceNodes())
        .containsExactly("/dev/sda");
  }

  @Test
  void watcherKeepsTheLastGoodInventoryAndNotifiesOnlyChanges() throws Exception {
    Path file = dir.resolve("inv.yaml");
    Files.writeString(file, TWO);
    InventoryWatcher w = new InventoryWatcher(new SimulatedBackend(file));
    List<Inventory> seen = new ArrayList<>();
    w.onChange(seen::add);
    w.refresh();
    w.refresh();
    assertThat(seen).hasSize(1);
    Files.writeString(file, "devices: [{name: a, colour: red}]");
    Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() + 5000));
    w.refresh();
    assertThat(w.current().devices()).hasSize(2);
    assertThat(w.lastError()).contains("colour");
    w.close();
  }

  @Test
  void watcherReportsEveryPassFailedOnesToo() throws Exception {
    Path file = dir.resolve("inv.yaml");
    Files.writeString(file, TWO);
    java.time.Instant t = java.time.Instant.parse("2026-12-01T10:00:00Z");
    InventoryWatcher w =
        new InventoryWatcher(
            new SimulatedBackend(file), java.time.Clock.fixed(t, java.time.ZoneOffset.UTC));
    List<DiscoveryPass> passes = new ArrayList<>();
    w.refresh();
    w.onPass(passes::add); // hears the last pass at once
    w.refresh();
    Files.writeString(file, "devices: [{name: a, colour: red}]");
    Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() + 5000));
    w.refresh();
    assertThat(passes).extracting(DiscoveryPass::failed).containsExactly(false, false, true);
    assertThat(passes.get(2).inventory().devices()).hasSize(2); // the last good one
    assertThat(passes.get(2).error()).contains("colour");
    assertThat(passes)
        .allSatisfy(
            p -> {
              assertThat(p.discovered()).isTrue();
              assertThat(p.finishedAt()).isEqualTo(t);
            });
    w.close();
  }
}
