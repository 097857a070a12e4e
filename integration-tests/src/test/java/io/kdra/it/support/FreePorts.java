package io.kdra.it.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Hands out TCP ports for processes the tests start, which bind them later. An ephemeral port
 * ({@code new ServerSocket(0)}) is closed before the process binds it, and in the meantime any
 * outgoing connection of the machine may take it as its source port; ports below the kernel's
 * ephemeral range are never taken that way. Within this JVM no port is handed out twice; between
 * JVMs (runs side by side) a random starting point keeps collisions unlikely, and a port some
 * process already listens on is skipped.
 */
final class FreePorts {

  /** Below this the ports of well-known and registered services cluster. */
  static final int LOWEST = 15000;

  private final int lowest;
  private final int highest;
  private final Set<Integer> handedOut = new HashSet<>();
  private int next;

  FreePorts(int lowest, int highest) {
    if (highest < lowest) {
      throw new IllegalArgumentException("empty port range " + lowest + "-" + highest);
    }
    this.lowest = lowest;
    this.highest = highest;
    this.next = lowest + ThreadLocalRandom.current().nextInt(highest - lowest + 1);
  }

  /** Ports from {@link #LOWEST} up to just below this machine's ephemeral range. */
  static FreePorts belowEphemeralRange() {
    return new FreePorts(
        LOWEST, ephemeralRangeStart(Path.of("/proc/sys/net/ipv4/ip_local_port_range")) - 1);
  }

  /** The first port of the kernel's ephemeral range; Linux's default when the file is absent. */
  static int ephemeralRangeStart(Path rangeFile) {
    try {
      // readAllLines, not readString: procfs reports a size of 0, and readString reads one byte
      String[] bounds = Files.readAllLines(rangeFile).get(0).trim().split("\\s+");
      return Integer.parseInt(bounds[0]);
    } catch (IOException | RuntimeException e) {
      return 32768;
    }
  }

  /** A port no process listens on now, and that this instance has not handed out before. */
  synchronized int take() {
    int size = highest - lowest + 1;
    for (int tried = 0; tried < size; tried++) {
      int port = next;
      next = port == highest ? lowest : port + 1;
      if (!handedOut.contains(port) && bindable(port)) {
        handedOut.add(port);
        return port;
      }
    }
    throw new IllegalStateException("no free port left in " + lowest + "-" + highest);
  }

  /** Whether the port can be bound on every address and on loopback (services use either). */
  private static boolean bindable(int port) {
    return bindable(new InetSocketAddress(port))
        && bindable(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
  }

  private static boolean bindable(InetSocketAddress address) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(address);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
