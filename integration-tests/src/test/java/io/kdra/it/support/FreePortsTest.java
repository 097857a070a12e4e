package io.kdra.it.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ports the harness hands its processes, on real sockets. */
class FreePortsTest {

  @TempDir Path dir;

  @Test
  void handsOutEveryPortOfTheRangeOnceAndThenRefuses() {
    FreePorts ports = freeRangeOf(4);
    Set<Integer> taken = new HashSet<>();
    for (int i = 0; i < 4; i++) {
      taken.add(ports.take());
    }
    assertThat(taken).hasSize(4);
    assertThatThrownBy(ports::take).hasMessageContaining("no free port left");
  }

  @Test
  void skipsAPortSomeProcessListensOn() throws Exception {
    FreePorts probe = freeRangeOf(2);
    int first = probe.take();
    int second = probe.take();
    int low = Math.min(first, second);
    try (ServerSocket busy = new ServerSocket()) {
      busy.bind(new InetSocketAddress(low));
      FreePorts ports = new FreePorts(low, low + 1);
      assertThat(ports.take()).isEqualTo(low + 1);
      assertThatThrownBy(ports::take).isInstanceOf(IllegalStateException.class);
    }
  }

  @Test
  void staysBelowTheKernelsEphemeralRange() throws Exception {
    Path range = dir.resolve("ip_local_port_range");
    Files.writeString(range, "32768\t60999\n");
    assertThat(FreePorts.ephemeralRangeStart(range)).isEqualTo(32768);
    assertThat(FreePorts.ephemeralRangeStart(dir.resolve("absent"))).isEqualTo(32768);
    int port = FreePorts.belowEphemeralRange().take();
    assertThat(port)
        .isBetween(
            FreePorts.LOWEST,
            FreePorts.ephemeralRangeStart(Path.of("/proc/sys/net/ipv4/ip_local_port_range")) - 1);
  }

  /** A range of {@code size} consecutive ports that nothing listens on now, found by probing. */
  private static FreePorts freeRangeOf(int size) {
    for (int low = 20000 + (int) (ProcessHandle.current().pid() % 5000); low < 32000; low += size) {
      if (allBindable(low, size)) {
        return new FreePorts(low, low + size - 1);
      }
    }
    throw new IllegalStateException("no free range of " + size + " ports");
  }

  private static boolean allBindable(int low, int size) {
    for (int p = low; p < low + size; p++) {
      try (ServerSocket s = new ServerSocket()) {
        s.bind(new InetSocketAddress(p));
      } catch (Exception e) {
        return false;
      }
    }
    return true;
  }
}
