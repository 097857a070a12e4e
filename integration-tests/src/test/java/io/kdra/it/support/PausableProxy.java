package io.kdra.it.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
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
 *       once, as when the peer's address refuses them. What a pause held back is dropped: a pause
 *       then a cut loses the bytes in flight, as a partition that drops packets and ends in resets.
 *   <li>{@link #heal()}: bytes flow again; what a pause held back is delivered, closes included.
 *   <li>{@link #delay(Duration)}: added latency, as of a slow link or a slow peer: every chunk, in
 *       either direction, is delivered that long after it was read, in order. A delay, not a
 *       bandwidth limit: the chunks behind one wait no longer for it.
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
  private volatile long delayNanos;

  /** What a relay read, to be written once due; {@code bytes} null: the end of the stream. */
  private record Chunk(byte[] bytes, long due) {}

  /** Tells a relay's writer that its reader failed: nothing more comes. */
  private static final Chunk FAILED = new Chunk(new byte[0], 0);

  /** Chunks read but not yet written, per direction of a connection (16 KiB each at most). */
  private static final int LINE_CHUNKS = 64;

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

  /**
   * From now on, every chunk read in either direction is written {@code latency} later (zero: at
   * once); chunks read before keep the delay they were read with, so the order stays.
   */
  public void delay(Duration latency) {
    delayNanos = latency.toNanos();
    System.out.printf("[proxy] %s delays by %d ms%n", name, latency.toMillis());
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

  /**
   * Copies {@code from} to {@code to}: this thread reads, a writer of its own writes each chunk
   * once it is due ({@link #delay}) and the gate is open, as it does the close.
   */
  private void relay(Socket from, Socket to) {
    BlockingQueue<Chunk> line = new ArrayBlockingQueue<>(LINE_CHUNKS);
    daemon(() -> deliver(line, from, to), "proxy-" + name + "-write").start();
    byte[] buffer = new byte[16 * 1024];
    try {
      InputStream in = from.getInputStream();
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        enqueue(line, new Chunk(Arrays.copyOf(buffer, n), System.nanoTime() + delayNanos), from);
      }
      enqueue(line, new Chunk(null, System.nanoTime() + delayNanos), from);
    } catch (IOException e) {
      forget(from);
      forget(to);
      // the writer may wait for a chunk; if the line is full it finds the sockets closed instead
      line.offer(FAILED);
    }
  }

  /** Puts {@code chunk} on the line, waiting while it is full (a pause holds the writer). */
  private static void enqueue(BlockingQueue<Chunk> line, Chunk chunk, Socket from)
      throws IOException {
    try {
      while (!line.offer(chunk, 200, TimeUnit.MILLISECONDS)) {
        if (from.isClosed()) {
          throw new IOException("closed");
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  /** Writes the line's chunks to {@code to}, each once due and once the gate is open. */
  private void deliver(BlockingQueue<Chunk> line, Socket from, Socket to) {
    try {
      OutputStream out = to.getOutputStream();
      while (true) {
        Chunk chunk = line.take();
        if (chunk == FAILED) {
          return;
        }
        long wait = chunk.due() - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
        if (!awaitOpen()) {
          throw new IOException("cut");
        }
        if (chunk.bytes() == null) {
          to.shutdownOutput();
          // the other direction ended first: the connection is done
          if (from.isOutputShutdown()) {
            forget(from);
            forget(to);
          }
          return;
        }
        out.write(chunk.bytes());
        out.flush();
      }
    } catch (IOException e) {
      forget(from);
      forget(to);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
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
