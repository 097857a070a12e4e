package io.kdra.devicedriver.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.discovery.DiscoveryPass;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.testing.Inventories;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HealthStreamsTest {
  private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
  private final HealthStreams streams =
      new HealthStreams(new HealthReporting("node-a", Duration.ofSeconds(30)));

  /** Records what it got; refuses after {@code gone}. */
  static final class Recorder implements HealthStreams.Subscriber {
    final List<HealthReport> got = new ArrayList<>();
    boolean gone;

    @Override
    public boolean send(HealthReport report) {
      if (gone) {
        return false;
      }
      got.add(report);
      return true;
    }

    List<String> states() {
      return got.stream()
          .map(r -> r.devices().stream().map(d -> d.name() + "=" + d.state()).toList().toString())
          .toList();
    }
  }

  private static DiscoveryPass healthy(int seconds) {
    return new DiscoveryPass(Inventories.gpus(2), true, "", T0.plusSeconds(seconds));
  }

  private static DiscoveryPass gpu1Unhealthy(int seconds) {
    Inventory two = Inventories.gpus(2);
    return new DiscoveryPass(
        Inventory.of(
            List.of(
                two.devices().get(0),
                two.devices().get(1).withHealth(NodeDevice.Health.UNHEALTHY, "ECC"))),
        true,
        "",
        T0.plusSeconds(seconds));
  }

  @Test
  void aNewStreamGetsTheCurrentHealthAtOnce() {
    Recorder early = new Recorder();
    streams.subscribe(early);
    assertThat(early.got).containsExactly(HealthReport.EMPTY);

    streams.onPass(healthy(0));
    Recorder late = new Recorder();
    streams.subscribe(late);
    assertThat(late.states()).containsExactly("[gpu-0=HEALTHY, gpu-1=HEALTHY]");
    assertThat(early.states()).containsExactly("[]", "[gpu-0=HEALTHY, gpu-1=HEALTHY]");
  }

  @Test
  void everyStreamGetsChangesAndHeartbeatsButNotUnchangedPasses() {
    streams.onPass(healthy(0));
    Recorder a = new Recorder();
    Recorder b = new Recorder();
    streams.subscribe(a);
    streams.subscribe(b);
    streams.onPass(healthy(5)); // unchanged, heartbeat not due
    streams.onPass(gpu1Unhealthy(6)); // change
    streams.onPass(gpu1Unhealthy(11)); // unchanged
    streams.onPass(gpu1Unhealthy(16)); // heartbeat: 10s after the last send
    List<String> want =
        List.of(
            "[gpu-0=HEALTHY, gpu-1=HEALTHY]",
            "[gpu-0=HEALTHY, gpu-1=UNHEALTHY]",
            "[gpu-0=HEALTHY, gpu-1=UNHEALTHY]");
    assertThat(a.states()).isEqualTo(want);
    assertThat(b.states()).isEqualTo(want);
    assertThat(a.got.get(2).devices().get(1).determinedAt()).isEqualTo(T0.plusSeconds(16));
  }

  @Test
  void goneAndUnsubscribedStreamsAreDropped() {
    Recorder stays = new Recorder();
    Recorder goes = new Recorder();
    Recorder leaves = new Recorder();
    HealthStreams.Subscriber throwing =
        r -> {
          throw new IllegalStateException("call already cancelled");
        };
    streams.subscribe(stays);
    streams.subscribe(goes);
    streams.subscribe(leaves);
    streams.subscribe(throwing);
    assertThat(streams.streams()).isEqualTo(3); // the throwing one never joined

    goes.gone = true;
    streams.unsubscribe(leaves);
    streams.unsubscribe(leaves);
    streams.onPass(healthy(0));
    assertThat(streams.streams()).isEqualTo(1);
    assertThat(stays.got).hasSize(2);
    assertThat(leaves.got).hasSize(1);
  }

  @Test
  void anOlderPassCannotOverwriteANewerOne() {
    streams.onPass(gpu1Unhealthy(10));
    streams.onPass(healthy(9)); // e.g. replayed to a late listener
    assertThat(streams.current().devices().get(1).state()).isEqualTo(HealthState.UNHEALTHY);
  }

  @Test
  void aFailedPassMakesEveryDeviceUnknownAndRecoveryIsSent() {
    Recorder r = new Recorder();
    streams.subscribe(r);
    streams.onPass(healthy(0));
    streams.onPass(
        new DiscoveryPass(Inventories.gpus(2), true, "nvidia-smi: exit 9", T0.plusSeconds(1)));
    streams.onPass(healthy(2));
    assertThat(r.states())
        .containsExactly(
            "[]",
            "[gpu-0=HEALTHY, gpu-1=HEALTHY]",
            "[gpu-0=UNKNOWN, gpu-1=UNKNOWN]",
            "[gpu-0=HEALTHY, gpu-1=HEALTHY]");
  }
}
