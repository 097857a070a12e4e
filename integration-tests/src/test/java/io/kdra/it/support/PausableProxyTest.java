package io.kdra.it.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PausableProxyTest {

  /** How long a read may wait for bytes that must come. */
  private static final int ARRIVES_MS = 30_000;

  /** How long a read waits to show that nothing comes (a pause's bytes must not). */
  private static final int NOTHING_MS = 500;

  /** The latency a test adds (a lower bound is all it checks: never flaky under load). */
  private static final int DELAY_MS = 400;

  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  @Test
  void connectionsGoToTheBackendsInTurnAndBytesFlowBothWays() throws Exception {
    PausableProxy proxy = proxy(echo("a"), echo("b"));
    List<String> answers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      Socket s = dial(proxy);
      send(s, "x");
      answers.add(read(s, 2));
    }
    assertThat(answers).containsExactly("ax", "bx", "ax", "bx");
  }

  @Test
  void aPauseHoldsEveryByteOfOpenAndNewConnectionsUntilItHeals() throws Exception {
    PausableProxy proxy = proxy(echo("a"));
    Socket before = dial(proxy);
    send(before, "1");
    assertThat(read(before, 2)).isEqualTo("a1");

    proxy.pause();
    send(before, "2");
    Socket during = dial(proxy);
    send(during, "3");
    assertNothingArrives(before);
    assertNothingArrives(during);

    proxy.heal();
    assertThat(read(before, 2)).isEqualTo("a2");
    assertThat(read(during, 2)).isEqualTo("a3");
  }

  @Test
  void aPauseHoldsBackAClose() throws Exception {
    PausableProxy proxy = proxy(echo("a"));
    Socket s = dial(proxy);
    send(s, "1");
    assertThat(read(s, 2)).isEqualTo("a1");
    proxy.pause();
    send(s, "q"); // the echo server closes on 'q'
    assertNothingArrives(s);
    proxy.heal();
    s.setSoTimeout(ARRIVES_MS);
    assertThat(s.getInputStream().read()).as("the close, after the heal").isEqualTo(-1);
  }

  @Test
  void aCutClosesOpenConnectionsAndRefusesNewOnesUntilItHeals() throws Exception {
    PausableProxy proxy = proxy(echo("a"));
    Socket before = dial(proxy);
    send(before, "1");
    assertThat(read(before, 2)).isEqualTo("a1");

    proxy.cut();
    assertClosed(before);
    assertClosed(dial(proxy));

    proxy.heal();
    Socket after = dial(proxy);
    send(after, "2");
    assertThat(read(after, 2)).isEqualTo("a2");
  }

  /**
   * A pause, then a cut: what the pause held back is never delivered, in either direction, as
   * packets a partition dropped; the server sees only the close. After the heal, new connections
   * carry bytes again.
   */
  @Test
  void aCutDropsWhatAPauseHeldBack() throws Exception {
    List<String> received = new ArrayList<>();
    PausableProxy proxy = proxy(recording(received));
    Socket s = dial(proxy);
    send(s, "1");
    awaitRead(received, "1");

    proxy.pause();
    send(s, "2");
    proxy.cut();
    assertClosed(s);
    proxy.heal();
    Socket after = dial(proxy);
    send(after, "3");
    awaitRead(received, "13");
    assertThat(String.join("", received)).as("what the server read").isEqualTo("13");
  }

  /**
   * Added latency: a chunk read after {@link PausableProxy#delay} is written no sooner than that
   * later, in each direction (so a round trip through the echo takes twice as long at least); bytes
   * keep their order; no delay again: they go at once.
   */
  @Test
  void aDelayHoldsEveryChunkThatLongInEachDirection() throws Exception {
    PausableProxy proxy = proxy(echo("a"));
    Socket s = dial(proxy);
    send(s, "1");
    assertThat(read(s, 2)).isEqualTo("a1");

    proxy.delay(Duration.ofMillis(DELAY_MS));
    long sent = System.nanoTime();
    send(s, "2");
    send(s, "3");
    assertThat(read(s, 4)).isEqualTo("a2a3");
    assertThat(Duration.ofNanos(System.nanoTime() - sent))
        .as("a round trip through two delays")
        .isGreaterThanOrEqualTo(Duration.ofMillis(2 * DELAY_MS));

    proxy.delay(Duration.ZERO);
    send(s, "4");
    assertThat(read(s, 2)).isEqualTo("a4");
  }

  private PausableProxy proxy(ServerSocket... backends) {
    List<Integer> ports = new ArrayList<>();
    for (ServerSocket b : backends) {
      ports.add(b.getLocalPort());
    }
    PausableProxy proxy = PausableProxy.toLocalPorts("test", ports);
    open.add(proxy);
    return proxy;
  }

  /** A server that answers each byte with its name and that byte, and closes on 'q'. */
  private ServerSocket echo(String name) throws IOException {
    ServerSocket server = new ServerSocket(0);
    open.add(server);
    Thread t =
        new Thread(
            () -> {
              while (!server.isClosed()) {
                try {
                  Socket s = server.accept();
                  open.add(s);
                  Thread c =
                      new Thread(
                          () -> {
                            try (s) {
                              InputStream in = s.getInputStream();
                              OutputStream out = s.getOutputStream();
                              for (int b = in.read(); b >= 0 && b != 'q'; b = in.read()) {
                                out.write((name + (char) b).getBytes(StandardCharsets.US_ASCII));
                                out.flush();
                              }
                            } catch (IOException e) {
                              // the test closed it
                            }
                          });
                  c.setDaemon(true);
                  c.start();
                } catch (IOException e) {
                  // closed
                }
              }
            });
    t.setDaemon(true);
    t.start();
    return server;
  }

  /** A server that appends what it reads, byte by byte, to {@code received}. */
  private ServerSocket recording(List<String> received) throws IOException {
    ServerSocket server = new ServerSocket(0);
    open.add(server);
    Thread t =
        new Thread(
            () -> {
              while (!server.isClosed()) {
                try {
                  Socket s = server.accept();
                  open.add(s);
                  Thread c =
                      new Thread(
                          () -> {
                            try (s) {
                              InputStream in = s.getInputStream();
                              for (int b = in.read(); b >= 0; b = in.read()) {
                                synchronized (received) {
                                  received.add(String.valueOf((char) b));
                                }
                              }
                            } catch (IOException e) {
                              // the proxy closed it
                            }
                          });
                  c.setDaemon(true);
                  c.start();
                } catch (IOException e) {
                  // closed
                }
              }
            });
    t.setDaemon(true);
    t.start();
    return server;
  }

  /** Waits until the server has read {@code text} in all. */
  private static void awaitRead(List<String> received, String text) {
    Awaitility.await()
        .atMost(Duration.ofMillis(ARRIVES_MS))
        .until(
            () -> {
              synchronized (received) {
                return String.join("", received).equals(text);
              }
            });
  }

  private Socket dial(PausableProxy proxy) throws IOException {
    Socket s = new Socket("127.0.0.1", proxy.port());
    open.add(s);
    return s;
  }

  private static void send(Socket s, String text) throws IOException {
    s.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
  }

  private static String read(Socket s, int n) throws IOException {
    s.setSoTimeout(ARRIVES_MS);
    return new String(s.getInputStream().readNBytes(n), StandardCharsets.US_ASCII);
  }

  private static void assertNothingArrives(Socket s) throws IOException {
    s.setSoTimeout(NOTHING_MS);
    assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
  }

  /** The proxy closed it: end of stream, or a reset. */
  private static void assertClosed(Socket s) throws IOException {
    s.setSoTimeout(ARRIVES_MS);
    int b;
    try {
      b = s.getInputStream().read();
    } catch (java.net.SocketException reset) {
      b = -1;
    }
    assertThat(b).isEqualTo(-1);
  }
}
