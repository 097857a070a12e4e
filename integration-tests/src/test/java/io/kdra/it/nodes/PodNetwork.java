package io.kdra.it.nodes;

import io.kdra.it.support.Commands;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * A pod network the host can reach, for a {@link RealNode} whose pods must be called by the API
 * server (an admission webhook through its Service): a Linux bridge {@code kdrabr<slot>} on the
 * host with the first address of a /28 of 203.0.113.0/24 (TEST-NET-3, documentation only, never the
 * host's own network), to which the {@code kdra-bridge} CNI plugin attaches each pod. The slot is
 * held with a file lock, so that concurrent runs on one machine get /28s of their own; a bridge
 * whose slot nobody holds is a killed run's and is deleted.
 *
 * <p>The pods reach the API server, which listens on loopback only, through a {@link Relay} on the
 * bridge's address, standing in for kube-proxy and the {@code kubernetes} Service: it ends TLS with
 * a certificate for the bridge's address (the pods trust it through kube-root-ca.crt, beside the
 * API server's CA) and opens TLS to the API server, copying the bytes between (the pods'
 * ServiceAccount tokens are HTTP headers). Hand-written, 60 lines: no library relays TLS without a
 * server of its own.
 */
public final class PodNetwork implements AutoCloseable {

  static final String PREFIX = "203.0.113";
  private static final int SLOTS = 16;

  final int slot;
  final String bridge;
  private final FileChannel lockFile;
  private final FileLock lock;
  private final List<Relay> relays = new ArrayList<>();

  private PodNetwork(int slot, FileChannel lockFile, FileLock lock) {
    this.slot = slot;
    this.bridge = "kdrabr" + slot;
    this.lockFile = lockFile;
    this.lock = lock;
  }

  /** Whether this machine can make one: root and the {@code ip} command. */
  public static boolean available() {
    return RealNode.runsAsRoot() && run("ip", "-V") == 0;
  }

  /** Claims a free slot, removes killed runs' bridges, and makes this one's. */
  public static PodNetwork create() {
    PodNetwork network = null;
    for (int slot = 0; slot < SLOTS; slot++) {
      try {
        FileChannel channel =
            FileChannel.open(lockPath(slot), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = channel.tryLock();
        if (lock == null) {
          channel.close();
          continue;
        }
        // a leftover of a killed run: its slot is free
        run("ip", "link", "del", "kdrabr" + slot);
        if (network == null) {
          network = new PodNetwork(slot, channel, lock);
        } else {
          lock.release();
          channel.close();
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    if (network == null) {
      throw new IllegalStateException("all " + SLOTS + " pod network slots are taken");
    }
    network.makeBridge();
    return network;
  }

  /** Machine-wide: {@link io.kdra.it.support.Leftovers#slotLock}. */
  static Path lockPath(int slot) {
    return io.kdra.it.support.Leftovers.slotLock("pod-network", slot);
  }

  /** The /28's first address: the network's number in the last byte. */
  int base() {
    return slot * 16;
  }

  /** The bridge's address: the pods' gateway, where relays listen. */
  public String gateway() {
    return PREFIX + "." + (base() + 1);
  }

  /** Whether an address is one of this network's pods'. */
  public boolean contains(String address) {
    if (!address.startsWith(PREFIX + ".")) {
      return false;
    }
    int last = Integer.parseInt(address.substring(PREFIX.length() + 1));
    return last > base() + 1 && last < base() + 15;
  }

  /** The CNI network configuration for the node's containerd. */
  String cniConfig() {
    return "{\"cniVersion\":\"1.0.0\",\"name\":\"kdra-bridge\",\"plugins\":[{\"type\":"
        + "\"kdra-bridge\",\"bridge\":\""
        + bridge
        + "\",\"prefix\":\""
        + PREFIX
        + "\","
        + "\"base\":"
        + base()
        + "}]}\n";
  }

  private void makeBridge() {
    check("ip", "link", "add", bridge, "type", "bridge");
    // no IPv6 on it (no router advertisements, no duplicate address detection)
    run("sysctl", "-qw", "net.ipv6.conf." + bridge + ".disable_ipv6=1");
    check("ip", "addr", "add", gateway() + "/28", "dev", bridge);
    check("ip", "link", "set", bridge, "up");
  }

  /**
   * A TLS relay from the bridge's address to {@code target}, on a free port, for connections from
   * this network's /28 only.
   *
   * @param serving presents the certificate for {@link #gateway()} to the pods
   * @param trusting verifies {@code target}'s certificate for the address it connects to
   */
  public Relay relay(InetSocketAddress target, SSLContext serving, SSLContext trusting) {
    Relay relay = new Relay(this, target, serving, trusting);
    relays.add(relay);
    return relay;
  }

  /** Deletes the bridge (the pods' veths went with their node) and frees the slot. */
  @Override
  public void close() {
    relays.forEach(Relay::close);
    run("ip", "link", "del", bridge);
    try {
      lock.release();
      lockFile.close();
    } catch (IOException e) {
      // released with the process anyway
    }
  }

  private static void check(String... command) {
    if (run(command) != 0) {
      throw new IllegalStateException("failed: " + String.join(" ", command));
    }
  }

  private static int run(String... command) {
    return Commands.run(Duration.ofSeconds(30), List.of(command)).exitCode();
  }

  /** A TCP relay on the bridge's address; each connection copied both ways by two threads. */
  public static final class Relay implements AutoCloseable {
    public final int port;
    private final ServerSocket server;

    private Relay(
        PodNetwork network, InetSocketAddress target, SSLContext serving, SSLContext trusting) {
      try {
        server = serving.getServerSocketFactory().createServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getByName(network.gateway()), 0));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      port = server.getLocalPort();
      Thread acceptor =
          new Thread(
              () -> {
                while (!server.isClosed()) {
                  try {
                    Socket in = server.accept();
                    if (!network.contains(in.getInetAddress().getHostAddress())) {
                      in.close();
                      continue;
                    }
                    SSLSocket out =
                        (SSLSocket)
                            trusting
                                .getSocketFactory()
                                .createSocket(target.getAddress(), target.getPort());
                    SSLParameters checked = out.getSSLParameters();
                    checked.setEndpointIdentificationAlgorithm("HTTPS");
                    out.setSSLParameters(checked);
                    pump(in, out);
                    pump(out, in);
                  } catch (IOException e) {
                    // closed, or the target refused this one
                  }
                }
              },
              "pod-network-relay-" + port);
      acceptor.setDaemon(true);
      acceptor.start();
    }

    private static void pump(Socket from, Socket to) {
      Thread t =
          new Thread(
              () -> {
                try (InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream()) {
                  in.transferTo(out);
                } catch (IOException e) {
                  // either side closed
                } finally {
                  try {
                    from.close();
                    to.close();
                  } catch (IOException e) {
                    // closed
                  }
                }
              },
              "pod-network-pump");
      t.setDaemon(true);
      t.start();
    }

    @Override
    public void close() {
      try {
        server.close();
      } catch (IOException e) {
        // closed
      }
    }
  }

  @Override
  public String toString() {
    return bridge + " " + PREFIX + "." + base() + "/28";
  }
}
