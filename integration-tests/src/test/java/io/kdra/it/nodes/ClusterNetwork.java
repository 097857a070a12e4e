package io.kdra.it.nodes;

import io.kdra.it.controlplane.ClusterAddresses;
import io.kdra.it.support.Commands;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The host's side of a multi-node test cluster's network: a Linux bridge the test makes ({@link
 * ClusterAddresses#bridge()}), with the first address of the cluster's node /28, to which each
 * node's network namespace is joined by a veth pair (the node's end is its {@code eth0}). The nodes
 * route each other's pod ranges over it; the host routes them too, so that the API server (which
 * listens on the bridge) can answer pods and call their webhooks. Netfilter is off on this bridge
 * ({@code nf_call_iptables 0}): frames between nodes never pass the machine's own iptables.
 *
 * <p>Nothing else changes on the machine: the routes go with the bridge, a node's veth with its
 * network namespace (which its namespace holder keeps: {@link NodeCgroups} ends it, also after a
 * killed JVM). The slot is held with a file lock; a bridge whose slot nobody holds is a killed
 * run's and is deleted when a slot is claimed.
 */
public final class ClusterNetwork implements AutoCloseable {

  public final ClusterAddresses addresses;
  private final FileChannel lockFile;
  private final FileLock lock;

  private ClusterNetwork(ClusterAddresses addresses, FileChannel lockFile, FileLock lock) {
    this.addresses = addresses;
    this.lockFile = lockFile;
    this.lock = lock;
  }

  /** Whether this machine can make one: root, {@code ip} and {@code nsenter}. */
  public static boolean available() {
    return RealNode.runsAsRoot()
        && run("ip", "-V").exitCode() == 0
        && run("nsenter", "-V").exitCode() == 0;
  }

  /** Claims a free slot, deletes killed runs' bridges, and makes this one's. */
  static ClusterNetwork create() {
    ClusterNetwork network = null;
    for (int slot = 0; slot < ClusterAddresses.SLOTS; slot++) {
      try {
        FileChannel channel =
            FileChannel.open(lockPath(slot), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = channel.tryLock();
        if (lock == null) {
          channel.close();
          continue;
        }
        ClusterAddresses a = new ClusterAddresses(slot);
        // a leftover of a killed run: its slot is free
        run("ip", "link", "del", a.bridge());
        if (network == null) {
          network = new ClusterNetwork(a, channel, lock);
        } else {
          lock.release();
          channel.close();
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    if (network == null) {
      throw new IllegalStateException("all " + ClusterAddresses.SLOTS + " cluster slots are taken");
    }
    try {
      network.makeBridge();
    } catch (RuntimeException e) {
      network.close();
      throw e;
    }
    return network;
  }

  /**
   * Deletes the bridges of killed runs (those whose slot no run holds), whether or not this run
   * makes a cluster: the nodes' namespaces and veths went with their cgroups already ({@link
   * NodeCgroups#reapLeftovers}).
   */
  public static void reapLeftovers() {
    for (int slot = 0; slot < ClusterAddresses.SLOTS; slot++) {
      String bridge = new ClusterAddresses(slot).bridge();
      if (run("ip", "link", "show", bridge).exitCode() != 0) {
        continue;
      }
      try (FileChannel channel =
          FileChannel.open(lockPath(slot), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        FileLock lock = channel.tryLock();
        if (lock != null) {
          run("ip", "link", "del", bridge);
          lock.release();
          System.out.println("[multi-node] deleted bridge " + bridge + " of a killed run");
        }
      } catch (IOException | java.nio.channels.OverlappingFileLockException e) {
        // held by this JVM, or unreadable: leave it
      }
    }
  }

  /** Machine-wide: {@link io.kdra.it.support.Leftovers#slotLock}. */
  static Path lockPath(int slot) {
    return io.kdra.it.support.Leftovers.slotLock("cluster-network", slot);
  }

  private void makeBridge() {
    String br = addresses.bridge();
    check("ip", "link", "add", br, "type", "bridge", "nf_call_iptables", "0");
    // no IPv6 on it (no router advertisements, no duplicate address detection)
    run("sysctl", "-qw", "net.ipv6.conf." + br + ".disable_ipv6=1");
    check("ip", "addr", "add", addresses.gateway() + "/" + addresses.nodePrefixLength(), "dev", br);
    check("ip", "link", "set", br, "up");
  }

  /**
   * Joins the network namespace of the process {@code holder} to the bridge as node {@code node}:
   * its {@code eth0} with the node's address, a default route to the host, routes to the other
   * nodes' pod ranges through them, forwarding on (pods route through their node), and bridged pod
   * traffic through the node's iptables (kube-proxy's and the NetworkPolicy rules). The host routes
   * the node's pod range to it.
   *
   * @param nodes how many nodes the cluster has (the routes to their pod ranges)
   */
  void join(long holder, int node, int nodes) {
    String veth = addresses.hostVeth(node);
    String pid = Long.toString(holder);
    run("ip", "link", "del", veth);
    check("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", pid);
    run("sysctl", "-qw", "net.ipv6.conf." + veth + ".disable_ipv6=1");
    check("ip", "link", "set", veth, "master", addresses.bridge(), "up");
    List<List<String>> inside = new ArrayList<>();
    inside.add(List.of("ip", "link", "set", "lo", "up"));
    inside.add(
        List.of(
            "ip",
            "addr",
            "add",
            addresses.nodeIp(node) + "/" + addresses.nodePrefixLength(),
            "dev",
            "eth0"));
    inside.add(List.of("ip", "link", "set", "eth0", "up"));
    inside.add(List.of("ip", "route", "add", "default", "via", addresses.gateway()));
    for (int other = 0; other < nodes; other++) {
      if (other != node) {
        inside.add(
            List.of(
                "ip", "route", "add", addresses.podCidr(other), "via", addresses.nodeIp(other)));
      }
    }
    // a new network namespace's own values (these sysctls are per namespace)
    inside.add(List.of("sysctl", "-qw", "net.ipv4.ip_forward=1"));
    inside.add(List.of("sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1"));
    for (List<String> c : inside) {
      List<String> command = new ArrayList<>(List.of("nsenter", "-t", pid, "-n", "--"));
      command.addAll(c);
      check(command.toArray(String[]::new));
    }
    check(
        "ip",
        "route",
        "add",
        addresses.podCidr(node),
        "via",
        addresses.nodeIp(node),
        "dev",
        addresses.bridge());
  }

  /** Deletes the bridge (its routes go with it; the nodes' veths went with their namespaces). */
  @Override
  public void close() {
    run("ip", "link", "del", addresses.bridge());
    try {
      lock.release();
      lockFile.close();
    } catch (IOException e) {
      // released with the process anyway
    }
  }

  private static void check(String... command) {
    Commands.Result r = run(command);
    if (r.exitCode() != 0) {
      throw new IllegalStateException(
          "failed (" + r.exitCode() + "): " + String.join(" ", command) + ": " + r.output());
    }
  }

  private static Commands.Result run(String... command) {
    return Commands.run(Duration.ofSeconds(30), List.of(command));
  }

  @Override
  public String toString() {
    return addresses.bridge() + " " + addresses.gateway() + "/" + addresses.nodePrefixLength();
  }
}
