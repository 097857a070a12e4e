package io.kdra.devicedriver.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kdra.devicedriver.discovery.DiscoveryPass;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.testing.Inventories;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class HealthReportingTest {
  private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final HealthReporting REPORTING = new HealthReporting("node-a", TIMEOUT);

  /** Expected device: name, state, message. */
  record Want(String name, HealthState state, String message) {}

  record ReportCase(DiscoveryPass pass, List<Want> want) {}

  static Stream<Named<ReportCase>> reports() {
    Inventory two = Inventories.gpus(2);
    Inventory oneSick =
        Inventory.of(
            List.of(
                two.devices().get(0),
                two.devices()
                    .get(1)
                    .withHealth(NodeDevice.Health.UNHEALTHY, "XID 79: fallen off the bus")));
    return Stream.of(
        Named.of(
            "nothing discovered yet",
            new ReportCase(new DiscoveryPass(Inventory.EMPTY, false, "", T0), List.of())),
        Named.of(
            "first pass failed: no devices known, nothing to report",
            new ReportCase(
                new DiscoveryPass(Inventory.EMPTY, false, "nvidia-smi: exit 9", T0), List.of())),
        Named.of(
            "all healthy",
            new ReportCase(
                new DiscoveryPass(two, true, "", T0),
                List.of(
                    new Want("gpu-0", HealthState.HEALTHY, ""),
                    new Want("gpu-1", HealthState.HEALTHY, "")))),
        Named.of(
            "one unhealthy, with discovery's reason",
            new ReportCase(
                new DiscoveryPass(oneSick, true, "", T0),
                List.of(
                    new Want("gpu-0", HealthState.HEALTHY, ""),
                    new Want("gpu-1", HealthState.UNHEALTHY, "XID 79: fallen off the bus")))),
        Named.of(
            "failed pass: every known device unknown, whatever it was",
            new ReportCase(
                new DiscoveryPass(oneSick, true, "nvidia-smi timed out after 10s", T0),
                List.of(
                    new Want(
                        "gpu-0",
                        HealthState.UNKNOWN,
                        "discovery failed: nvidia-smi timed out after 10s"),
                    new Want(
                        "gpu-1",
                        HealthState.UNKNOWN,
                        "discovery failed: nvidia-smi timed out after 10s")))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("reports")
  void reportsWhatThePassSays(ReportCase c) {
    HealthReport report = REPORTING.report(c.pass());
    assertThat(report.devices())
        .extracting(d -> new Want(d.name(), d.state(), d.message()))
        .containsExactlyElementsOf(c.want());
    assertThat(report.devices())
        .allSatisfy(
            d -> {
              assertThat(d.pool()).isEqualTo("node-a");
              assertThat(d.determinedAt()).isEqualTo(T0);
              assertThat(d.checkTimeout()).isEqualTo(TIMEOUT);
            });
  }

  record SendCase(HealthReport last, Duration sinceLastSend, HealthReport next, boolean send) {}

  static Stream<Named<SendCase>> sends() {
    HealthReport healthy =
        report(dev("gpu-0", HealthState.HEALTHY, ""), dev("gpu-1", HealthState.HEALTHY, ""));
    HealthReport later =
        new HealthReport(
            healthy.devices().stream()
                .map(
                    d ->
                        new HealthReport.Device(
                            d.pool(),
                            d.name(),
                            d.state(),
                            d.message(),
                            d.determinedAt().plusSeconds(5),
                            d.checkTimeout()))
                .toList());
    HealthReport sick =
        report(dev("gpu-0", HealthState.HEALTHY, ""), dev("gpu-1", HealthState.UNHEALTHY, "ECC"));
    HealthReport sicker =
        report(
            dev("gpu-0", HealthState.HEALTHY, ""),
            dev("gpu-1", HealthState.UNHEALTHY, "ECC, twice"));
    HealthReport unknown =
        report(
            dev("gpu-0", HealthState.UNKNOWN, "discovery failed: x"),
            dev("gpu-1", HealthState.UNKNOWN, "discovery failed: x"));
    HealthReport fewer = report(dev("gpu-0", HealthState.HEALTHY, ""));
    HealthReport otherTimeout =
        new HealthReport(
            healthy.devices().stream()
                .map(
                    d ->
                        new HealthReport.Device(
                            d.pool(),
                            d.name(),
                            d.state(),
                            d.message(),
                            d.determinedAt(),
                            Duration.ofSeconds(60)))
                .toList());
    Duration soon = Duration.ofSeconds(1);
    return Stream.of(
        Named.of("nothing sent yet", new SendCase(null, Duration.ZERO, healthy, true)),
        Named.of(
            "nothing sent yet, empty report",
            new SendCase(null, Duration.ZERO, HealthReport.EMPTY, true)),
        Named.of("unchanged, only checked again", new SendCase(healthy, soon, later, false)),
        Named.of(
            "unchanged, heartbeat not yet due",
            new SendCase(healthy, Duration.ofMillis(9_999), healthy, false)),
        Named.of(
            "unchanged, heartbeat due (a third of the timeout)",
            new SendCase(healthy, Duration.ofSeconds(10), later, true)),
        Named.of("a device turns unhealthy", new SendCase(healthy, soon, sick, true)),
        Named.of("a device recovers", new SendCase(sick, soon, healthy, true)),
        Named.of("only the message changes", new SendCase(sick, soon, sicker, true)),
        Named.of("discovery starts failing", new SendCase(healthy, soon, unknown, true)),
        Named.of("a device disappears", new SendCase(healthy, soon, fewer, true)),
        Named.of("a device appears", new SendCase(fewer, soon, healthy, true)),
        Named.of("the timeout changes", new SendCase(healthy, soon, otherTimeout, true)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("sends")
  void sendsChangesAndHeartbeats(SendCase c) {
    Instant now = T0.plusSeconds(100);
    assertThat(REPORTING.mustSend(c.last(), now.minus(c.sinceLastSend()), c.next(), now))
        .isEqualTo(c.send());
  }

  record TimeoutCase(Duration discoveryInterval, Duration checkTimeout) {}

  static Stream<Named<TimeoutCase>> timeouts() {
    return Stream.of(
        Named.of(
            "fast discovery: the kubelet's default 30s",
            new TimeoutCase(Duration.ofSeconds(1), Duration.ofSeconds(30))),
        Named.of(
            "the default 10s interval: four passes",
            new TimeoutCase(Duration.ofSeconds(10), Duration.ofSeconds(40))),
        Named.of(
            "fractions round up to whole seconds",
            new TimeoutCase(Duration.ofMillis(7_600), Duration.ofSeconds(31))),
        Named.of("slow discovery", new TimeoutCase(Duration.ofMinutes(1), Duration.ofMinutes(4))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("timeouts")
  void checkTimeoutCoversFourDiscoveryPasses(TimeoutCase c) {
    assertThat(HealthReporting.forDiscoveryEvery("node-a", c.discoveryInterval()).checkTimeout())
        .isEqualTo(c.checkTimeout());
  }

  @Test
  void refusesATimeoutTheKubeletCannotTake() {
    assertThatThrownBy(() -> new HealthReporting("node-a", Duration.ZERO))
        .hasMessageContaining("positive number of seconds");
    assertThatThrownBy(() -> new HealthReporting("node-a", Duration.ofMillis(1500)))
        .hasMessageContaining("positive number of seconds");
  }

  static HealthReport.Device dev(String name, HealthState state, String message) {
    return new HealthReport.Device("node-a", name, state, message, T0, TIMEOUT);
  }

  static HealthReport report(HealthReport.Device... devices) {
    return new HealthReport(List.of(devices));
  }
}
