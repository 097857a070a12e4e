package io.kdra.devicedriver.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.core.model.Semver;
import io.kdra.devicedriver.testing.HungCommand;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The nvidia backend on nvidia-smi outputs in src/test/resources/nvidia-smi. Those files follow the
 * exact format of {@code --format=csv,noheader,nounits} for the query in {@link
 * NvidiaSmiParser#QUERY}; they were written for these tests (no GPU machine was available to record
 * from), with the product names, memory sizes and driver versions such boxes report.
 */
class NvidiaBackendTest {
  @TempDir Path host;

  static String fixture(String name) throws IOException {
    try (InputStream in = NvidiaBackendTest.class.getResourceAsStream("/nvidia-smi/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static AttributeValue attr(NodeDevice d, String name) {
    return d.attributes().get(name);
  }

  @Test
  void h100BoxWithHostFacts() throws Exception {
    // gpu-0's minor differs from its index on purpose: the device node must follow the minor
    Path gpus = host.resolve("proc/driver/nvidia/gpus/0000:18:00.0");
    Files.createDirectories(gpus);
    Files.writeString(
        gpus.resolve("information"),
        "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 255\nDevice Minor: \t 4\nBus Location: \t 0000:18:00.0\n");
    Path real = host.resolve("sys/devices/pci0000:15/0000:15:01.0/0000:18:00.0");
    Files.createDirectories(real);
    Files.createDirectories(host.resolve("sys/bus/pci/devices"));
    Files.createSymbolicLink(
        host.resolve("sys/bus/pci/devices/0000:18:00.0"),
        Path.of("../../../devices/pci0000:15/0000:15:01.0/0000:18:00.0"));
    Files.createDirectories(host.resolve("dev"));
    Files.writeString(host.resolve("dev/nvidiactl"), "");

    Inventory inv = NvidiaBackend.inventory(fixture("h100-8x.csv"), host);

    assertThat(inv.devices()).hasSize(8);
    assertThat(inv.commonDeviceNodes()).containsExactly("/dev/nvidiactl");
    NodeDevice g0 = inv.device("gpu-0").orElseThrow();
    assertThat(attr(g0, "productName"))
        .isEqualTo(new AttributeValue.StringValue("NVIDIA H100 80GB HBM3"));
    assertThat(attr(g0, "uuid"))
        .isEqualTo(new AttributeValue.StringValue("GPU-6513270e-269e-4d37-b2a7-4de452e6b438"));
    assertThat(attr(g0, "index")).isEqualTo(new AttributeValue.IntValue(0));
    assertThat(attr(g0, "minor")).isEqualTo(new AttributeValue.IntValue(4));
    assertThat(attr(g0, "type")).isEqualTo(new AttributeValue.StringValue("gpu"));
    assertThat(attr(g0, "architecture")).isEqualTo(new AttributeValue.StringValue("Hopper"));
    assertThat(attr(g0, "driverVersion"))
        .isEqualTo(new AttributeValue.VersionValue(Semver.parse("550.127.5")));
    assertThat(attr(g0, "cudaComputeCapability"))
        .isEqualTo(new AttributeValue.VersionValue(Semver.parse("9.0.0")));
    assertThat(attr(g0, "migEnabled")).isEqualTo(new AttributeValue.BoolValue(false));
    assertThat(attr(g0, "resource.kubernetes.io/pciBusID"))
        .isEqualTo(new AttributeValue.StringValue("0000:18:00.0"));
    assertThat(attr(g0, "resource.kubernetes.io/pcieRoot"))
        .isEqualTo(new AttributeValue.StringValue("pci0000:15"));
    assertThat(g0.capacity().get("memory")).isEqualTo(Quantity.parse("81559Mi"));
    assertThat(g0.deviceNodes()).containsExactly("/dev/nvidia4");
    // no host facts for the others: those attributes are left out, not guessed
    NodeDevice g1 = inv.device("gpu-1").orElseThrow();
    assertThat(g1.attributes()).doesNotContainKeys("minor", "resource.kubernetes.io/pcieRoot");
    assertThat(g1.deviceNodes()).isEmpty();
  }

  @Test
  void h200BoxWithOneGpuInMigMode() throws Exception {
    Inventory inv = NvidiaBackend.inventory(fixture("h200-8x-mig.csv"), host);
    assertThat(inv.devices())
        .hasSize(8)
        .allSatisfy(
            d -> {
              assertThat(attr(d, "productName"))
                  .isEqualTo(new AttributeValue.StringValue("NVIDIA H200"));
              assertThat(d.capacity().get("memory")).isEqualTo(Quantity.parse("143771Mi"));
              assertThat(d.health()).isEqualTo(NodeDevice.Health.HEALTHY);
            });
    assertThat(attr(inv.device("gpu-7").orElseThrow(), "migEnabled"))
        .isEqualTo(new AttributeValue.BoolValue(true));
    assertThat(attr(inv.device("gpu-0").orElseThrow(), "driverVersion"))
        .isEqualTo(new AttributeValue.VersionValue(Semver.parse("570.124.6")));
  }

  @Test
  void notAvailableFieldsAreLeftOut() throws Exception {
    Inventory inv = NvidiaBackend.inventory(fixture("t4-l4-na.csv"), host);
    NodeDevice t4 = inv.device("gpu-0").orElseThrow();
    assertThat(attr(t4, "architecture")).isEqualTo(new AttributeValue.StringValue("Turing"));
    assertThat(t4.attributes()).doesNotContainKey("migEnabled");
    NodeDevice l4 = inv.device("gpu-1").orElseThrow();
    assertThat(l4.attributes())
        .containsOnlyKeys(
            "type", "index", "uuid", "productName", "resource.kubernetes.io/pciBusID");
    assertThat(l4.capacity()).isEmpty();
    assertThat(l4.health()).isEqualTo(NodeDevice.Health.HEALTHY);
  }

  @Test
  void errorFieldsMakeAGpuUnhealthyAndUnopenableGpusAreProblems() throws Exception {
    NvidiaSmiParser.Result r = NvidiaSmiParser.parse(fixture("a100-lost.csv"));
    assertThat(r.gpus()).hasSize(2);
    assertThat(r.problems())
        .singleElement()
        .asString()
        .startsWith("nvidia-smi line 3: Unable to determine the device handle");
    Inventory inv = NvidiaBackend.inventory(fixture("a100-lost.csv"), host);
    assertThat(attr(inv.device("gpu-0").orElseThrow(), "migEnabled"))
        .isEqualTo(new AttributeValue.BoolValue(true));
    NodeDevice bad = inv.device("gpu-1").orElseThrow();
    assertThat(bad.health()).isEqualTo(NodeDevice.Health.UNHEALTHY);
    assertThat(bad.healthMessage())
        .isEqualTo(
            "nvidia-smi reports memory.total [Unknown Error], mig.mode.current [Unknown Error]");
  }

  record Bad(String output, String message) {}

  static Stream<Named<Bad>> malformed() {
    String ok =
        "0, GPU-1, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 81559, 550.127.05, 9.0, Disabled";
    return Stream.of(
        Named.of(
            "too few fields",
            new Bad("0, GPU-1, NVIDIA H100", "nvidia-smi line 1: expected 8 fields")),
        Named.of("too many fields (an older query)", new Bad(ok + ", 1", "got 9")),
        Named.of(
            "index not a number",
            new Bad(
                ok.replaceFirst("^0", "x"),
                "nvidia-smi line 1: field index: \"x\" is not a GPU index")),
        Named.of("index unknown", new Bad(ok.replaceFirst("^0", "[N/A]"), "field index")),
        Named.of(
            "uuid unknown",
            new Bad(
                "\n" + ok.replace("GPU-1", "[N/A]"),
                "nvidia-smi line 2: field uuid: \"[N/A]\" is not a GPU UUID")),
        Named.of(
            "duplicate index",
            new Bad(ok + "\n" + ok.replace("GPU-1", "GPU-2"), "duplicate device name gpu-0")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformed")
  void malformedOutputIsAnErrorNamingLineAndField(Bad b) {
    assertThatThrownBy(() -> NvidiaBackend.inventory(b.output(), host))
        .isInstanceOf(DiscoveryException.class)
        .hasMessageContaining(b.message());
  }

  @Test
  void busIdsAndVersionsAreNormalised() {
    assertThat(NvidiaDevices.busId("00000000:4F:00.0")).isEqualTo("0000:4f:00.0");
    assertThat(NvidiaDevices.busId("0000:4F:00.0")).isEqualTo("0000:4f:00.0");
    assertThat(NvidiaDevices.version("535.54")).contains(Semver.parse("535.54.0"));
    assertThat(NvidiaDevices.version("abc")).isEmpty();
    assertThat(NvidiaDevices.version("1.2.3.4")).isEmpty();
  }

  @Test
  void aMissingExecutableIsAClearError() {
    NvidiaBackend b =
        new NvidiaBackend("/nonexistent/nvidia-smi", java.time.Duration.ofSeconds(5), host);
    assertThatThrownBy(b::discover)
        .isInstanceOf(DiscoveryException.class)
        .hasMessageStartingWith("cannot run /nonexistent/nvidia-smi");
  }

  @Test
  void runsTheCommandWithTheQuery() throws Exception {
    Path fake = host.resolve("nvidia-smi");
    Files.writeString(
        fake,
        "#!/bin/sh\n[ \"$1\" = \"--query-gpu="
            + NvidiaSmiParser.QUERY
            + "\" ] || { echo \"bad args $*\"; exit 2; }\ncat "
            + host.resolve("out.csv")
            + "\n");
    Files.writeString(host.resolve("out.csv"), fixture("h200-8x-mig.csv"));
    fake.toFile().setExecutable(true);
    assertThat(
            new NvidiaBackend(fake.toString(), java.time.Duration.ofSeconds(10), host)
                .discover()
                .devices())
        .hasSize(8);
    Files.writeString(
        fake, "#!/bin/sh\necho 'Field \"compute_cap\" is not a valid field to query.'\nexit 2\n");
    assertThatThrownBy(
            () ->
                new NvidiaBackend(fake.toString(), java.time.Duration.ofSeconds(10), host)
                    .discover())
        .hasMessageEndingWith(
            "exited with 2: Field \"compute_cap\" is not a valid field to query.");
  }

  @Test
  void aHungNvidiaSmiFailsDiscoveryWithinTheTimeoutAndIsKilled() throws Exception {
    java.time.Duration timeout = java.time.Duration.ofSeconds(1);
    try (HungCommand hung = HungCommand.in(host)) {
      NvidiaBackend b = new NvidiaBackend(hung.path(), timeout, host);

      assertTimeoutPreemptively(
          HungCommand.bound(timeout),
          () ->
              assertThatThrownBy(b::discover)
                  .isInstanceOf(DiscoveryException.class)
                  .hasMessageStartingWith(hung.path() + " --query-gpu=")
                  .hasMessageContaining("did not finish within PT1S"));

      hung.assertAllGone();
    }
  }
}
