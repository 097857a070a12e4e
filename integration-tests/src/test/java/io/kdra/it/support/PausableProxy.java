package io.kdra.it.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on loopback that a test can partition: each accepted connection goes to the next of
 * its backends in turn (round-robin, as a Service spreads connections over its pods), and the test
 * decides whether bytes flow.
 *
 * <ul>
 *   <li>{@link #pause()}: a silent partition, as when packets are dropped. Open connections stay
 *       open but carry nothing in either direction (nor a close); a new connection is accepted but
 *       reaches no backend. Nobody is told, so only the peers' own timeouts notice.
 *   <li>{@link #cut()}: a loud one. Every open connection is closed, and new ones are closed at
 *       once, as when the peer's address refuses them.
 *   <li>{@link #heal()}: bytes flow again; what a pause held back is delivered, closes included.
 * </ul>
 */
public final class PausableProxy implements AutoCloseable {

  private enum State {
    OPEN,
    PAUSED,
    CUT,
    CLOSED
  }

  private final String name;
  private final List<InetSocketAddress> backends;
  private final ServerSocket server;
  private final AtomicInteger next = new AtomicInteger();
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final Object lock = new Object();
  private State state = State.OPEN;

  private PausableProxy(String name, List<InetSocketAddress> backends, ServerSocket server) {
    this.name = name;
    this.backends = List.copyOf(backends);
    this.server = server;
  }

  /** A proxy on a free loopback port in front of {@code backends}, relaying at once. */
  public static PausableProxy start(String name, List<InetSocketAddress> backends) {
    if (backends.isEmpty()) {
      throw new IllegalArgumentException("a proxy needs a backend");
    }
    try {
      ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      PausableProxy proxy = new PausableProxy(name, backends, server);
      daemon(proxy::acceptLoop, "proxy-" + name).start();
      return proxy;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A proxy in front of local ports. */
  public static PausableProxy toLocalPorts(String name, List<Integer> ports) {
    return start(
        name,
        ports.stream()
            .map(p -> new InetSocketAddress(InetAddress.getLoopbackAddress(), p))
            .toList());
  }

  /** The port clients dial. */
  public int port() {
    return server.getLocalPort();
  }

  /** {@code 127.0.0.1:<port>}. */
  public String address() {
    return server.getInetAddress().getHostAddress() + ":" + port();
  }

  /** Bytes stop, in both directions, on open connections and new ones alike. */
  public void pause() {
    to(State.PAUSED);
    System.out.printf("[proxy] %s paused%n", name);
  }

  /** Every connection is closed, and new ones are closed at once, until {@link #heal()}. */
  public void cut() {
    to(State.CUT);
    sockets.forEach(PausableProxy::closeQuietly);
    System.out.printf("[proxy] %s cut%n", name);
  }

  /** Bytes flow again. */
  public void heal() {
    to(State.OPEN);
    System.out.printf("[proxy] %s healed%n", name);
  }

  @Override
  public void close() {
    to(State.CLOSED);
    closeQuietly(server);
    sockets.forEach(PausableProxy::closeQuietly);
  }

  private void to(State s) {
    synchronized (lock) {
      if (state != State.CLOSED) {
        state = s;
      }
      lock.notifyAll();
    }
  }

  /** Returns once bytes may flow: true, or false when the connection must end (cut, closed). */
  private boolean awaitOpen() {
    synchronized (lock) {
      while (state == State.PAUSED) {
        try {
          lock.wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return state == State.OPEN;
    }
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        sockets.add(client);
        daemon(() -> connect(client), "proxy-" + name + "-connect").start();
      } catch (IOException e) {
        // closed
      }
    }
  }

  /** Dials the next backend once bytes may flow, then relays both ways. */
  private void connect(Socket client) {
    if (!awaitOpen()) {
      forget(client);
      return;
    }
    InetSocketAddress backend =
        backends.get(Math.floorMod(next.getAndIncrement(), backends.size()));
    Socket upstream = new Socket();
    sockets.add(upstream);
    try {
      upstream.connect(backend, 10_000);
    } catch (IOException e) {
      forget(upstream);
      forget(client);
      return;
    }
    daemon(() -> relay(client, upstream), "proxy-" + name + "-up").start();
    daemon(() -> relay(upstream, client), "proxy-" + name + "-down").start();
  }

  /** Copies {@code from} to {@code to}; each chunk waits for the gate, as does the close. */
  private void relay(Socket from, Socket to) {
    byte[] buffer = new byte[16 * 1024];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        if (!awaitOpen()) {
          throw new IOException("cut");
        }
        out.write(buffer, 0, n);
        out.flush();
      }
      if (!awaitOpen()) {
        throw new IOException("cut");
      }
      to.shutdownOutput();
      // the other direction ended first: the connection is done
      if (from.isOutputShutdown()) {
        forget(from);
        forget(to);
      }
    } catch (IOException e) {
      forget(from);
      forget(to);
    }
  }

  private void forget(Socket s) {
    sockets.remove(s);
    closeQuietly(s);
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException e) {
      // already gone
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
