package io.kdra.devicedriver.publisher;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.kdra.core.validation.SkipNodeOperations;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.inventory.v1.InventoryGrpc;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.inventory.v1.ReportAck;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.net.ssl.SSLException;
import org.jboss.logging.Logger;

/**
 * Keeps one {@code Inventory.Report} stream open to the slice-publisher and sends a full snapshot
 * on connect, on every inventory change and every {@code heartbeat}. The driver never writes
 * ResourceSlices itself.
 *
 * <p>Sequence numbers start at the wall-clock milliseconds of this process's start and increase by
 * one per snapshot, so a restarted driver's snapshots still count as newer than its predecessor's
 * (unless the clock went back by more than the predecessor sent).
 *
 * <p>On a broken stream it reconnects after a delay that starts at {@code initialBackoff}, doubles
 * per failure up to {@code maxBackoff}, and resets once the publisher acknowledges a snapshot. All
 * state changes run on one thread, so no locking is needed beyond it.
 *
 * <p>An outage is one WARN when it starts, a reminder every {@link #STILL_DOWN_REMINDER}, and one
 * INFO when it ends; each failed attempt in between is DEBUG (a publisher without a leader would
 * otherwise be a WARN every couple of seconds per node).
 */
public final class InventoryReporter implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(InventoryReporter.class);
  static final Duration STILL_DOWN_REMINDER = Duration.ofMinutes(5);

  /**
   * How many standby refusals in a row are retried after at most {@code initialBackoff} rather than
   * the growing backoff. A refusal proves the Service and a publisher answer; with R replicas each
   * new connection reaches the leader with a chance of about 1/R, so ten quick tries miss it with 2
   * replicas one time in a thousand, well within the publisher's disconnect grace. Beyond them (no
   * replica leads, e.g. during a fail-over) the normal backoff spares the publishers.
   */
  static final int STANDBY_QUICK_RETRIES = 10;

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  /**
   * The trailer with which a slice-publisher replica that is not the leader refuses a stream
   * (status UNAVAILABLE); inventory.proto documents it.
   */
  static final Metadata.Key<String> NOT_LEADER =
      Metadata.Key.of("kdra-not-leader", Metadata.ASCII_STRING_MARSHALLER);

  /** What a stream waits for the acknowledgement of a snapshot, unless told otherwise. */
  public static final Duration DEFAULT_ACK_TIMEOUT = Duration.ofSeconds(15);

  /**
   * Connection settings.
   *
   * @param ackTimeout how long a sent snapshot may go unacknowledged before the stream is given up
   *     for a new connection: a publisher that is frozen (SIGSTOP, a long pause) or cut off without
   *     a reset keeps the connection open and answers nothing
   */
  public record Settings(
      String driver,
      String node,
      String address,
      Path tokenFile,
      Duration initialBackoff,
      Duration maxBackoff,
      Duration heartbeat,
      Optional<Tls> tls,
      Duration ackTimeout,
      List<String> skipNodeOperations) {

    public Settings {
      List<String> problems = SkipNodeOperations.check(skipNodeOperations);
      if (!problems.isEmpty()) {
        throw new IllegalArgumentException(
            "kdra.device-driver.skip-node-operations: " + String.join("; ", problems));
      }
      skipNodeOperations = List.copyOf(skipNodeOperations);
    }

    /** Devices that need every node operation (the default). */
    public Settings(
        String driver,
        String node,
        String address,
        Path tokenFile,
        Duration initialBackoff,
        Duration maxBackoff,
        Duration heartbeat,
        Optional<Tls> tls,
        Duration ackTimeout) {
      this(
          driver,
          node,
          address,
          tokenFile,
          initialBackoff,
          maxBackoff,
          heartbeat,
          tls,
          ackTimeout,
          List.of());
    }

    /** Plain text, with the default acknowledgement timeout: tests and local runs. */
    public static Settings plainText(
        String driver,
        String node,
        String address,
        Path tokenFile,
        Duration initialBackoff,
        Duration maxBackoff,
        Duration heartbeat) {
      return new Settings(
          driver,
          node,
          address,
          tokenFile,
          initialBackoff,
          maxBackoff,
          heartbeat,
          Optional.empty(),
          DEFAULT_ACK_TIMEOUT);
    }
  }

  /**
   * TLS to the publisher: its certificate must chain to a CA of {@code caFile} (read again when it
   * changes) and name {@code serverName}, or the address's host when that is absent.
   */
  public record Tls(Path caFile, Optional<String> serverName) {}

  /**
   * Where a snapshot's discovery age comes from: every snapshot, heartbeats included, says how long
   * ago the last successful discovery pass ended, so that the publisher can taint a node whose
   * inventory is only repeated, not found again.
   *
   * @param interval how often discovery runs
   * @param lastSuccess when the last successful pass ended; empty before the first
   */
  public record Discovery(Duration interval, Supplier<Optional<Instant>> lastSuccess) {
    /** Snapshots say nothing about discovery. */
    static final Discovery UNKNOWN = new Discovery(Duration.ZERO, Optional::empty);
  }

  private final Settings settings;
  private final Clock clock;
  private final Discovery discovery;
  private final ManagedChannel channel;
  private final ScheduledExecutorService loop =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "inventory-reporter");
            t.setDaemon(true);
            return t;
          });
  private long sequence;
  private Inventory latest;
  private StreamObserver<InventorySnapshot> stream;
  private Duration backoff;
  private ScheduledFuture<?> reconnect;

  /** Set while a snapshot sent on the current stream awaits its acknowledgement. */
  private ScheduledFuture<?> ackDeadline;

  /** The sequence of the last snapshot sent on the current stream. */
  private long lastSent;

  private int standbyRefusals;
  private volatile boolean connected;
  private volatile String lastError = "not connected yet";
  private boolean closed;
  private final Outage outage = new Outage(STILL_DOWN_REMINDER);

  public InventoryReporter(Settings settings, Clock clock) {
    this(settings, clock, Discovery.UNKNOWN);
  }

  public InventoryReporter(Settings settings, Clock clock, Discovery discovery) {
    this.settings = settings;
    this.clock = clock;
    this.discovery = discovery;
    this.sequence = clock.millis();
    this.backoff = settings.initialBackoff();
    this.channel = channel(settings);
  }

  private static ManagedChannel channel(Settings settings) {
    NettyChannelBuilder builder = NettyChannelBuilder.forTarget(settings.address());
    if (settings.tls().isEmpty()) {
      return builder.usePlaintext().build();
    }
    Tls tls = settings.tls().get();
    try {
      builder.sslContext(
          GrpcSslContexts.forClient().trustManager(new CaFileTrustManager(tls.caFile())).build());
    } catch (SSLException e) {
      throw new IllegalStateException(
          "TLS to the publisher with the CA " + tls.caFile() + ": " + e.getMessage(), e);
    }
    // the certificate names the publisher's Service, also when the driver dials an address
    tls.serverName().ifPresent(builder::overrideAuthority);
    return builder.build();
  }

  /** Connects and starts the heartbeat; {@code initial} may be null (nothing to send yet). */
  public void start(Inventory initial) {
    loop.execute(
        () -> {
          latest = initial;
          connect();
        });
    long hb = Math.max(1, settings.heartbeat().toMillis());
    loop.scheduleWithFixedDelay(this::sendLatest, hb, hb, TimeUnit.MILLISECONDS);
  }

  /** Sends this inventory now (if connected) and after every reconnect. */
  public void report(Inventory inventory) {
    loop.execute(
        () -> {
          latest = inventory;
          sendLatest();
        });
  }

  /** Whether the stream is open and the publisher has acknowledged a snapshot on it. */
  public boolean connected() {
    return connected;
  }

  /** Why the stream is down, for readiness; empty when connected. */
  public String lastError() {
    return connected ? "" : lastError;
  }

  private void connect() {
    if (closed) {
      return;
    }
    reconnect = null;
    Metadata headers = new Metadata();
    String token = token();
    if (!token.isEmpty()) {
      headers.put(AUTHORIZATION, "Bearer " + token);
    }
    InventoryGrpc.InventoryStub stub =
        InventoryGrpc.newStub(channel)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    Acks acks = new Acks();
    stream = stub.report(acks);
    acks.requests = stream;
    sendLatest();
  }

  private String token() {
    try {
      // Re-read on every connect: the kubelet rotates projected ServiceAccount tokens.
      return Files.readString(settings.tokenFile(), StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      LOG.debugf("no token at %s; connecting without one", settings.tokenFile());
      return "";
    }
  }

  private void sendLatest() {
    if (stream == null || latest == null) {
      return;
    }
    try {
      InventorySnapshot snapshot =
          SnapshotMapper.snapshot(settings.driver(), settings.node(), ++sequence, latest);
      stream.onNext(
          SnapshotMapper.withSkipNodeOperations(
              SnapshotMapper.withDiscovery(
                  snapshot,
                  discovery.lastSuccess().get().map(at -> Duration.between(at, clock.instant())),
                  discovery.interval()),
              settings.skipNodeOperations()));
      lastSent = snapshot.getSequence();
      if (ackDeadline == null) {
        awaitAck(stream);
      }
    } catch (RuntimeException e) {
      broken("sending failed: " + e.getMessage());
    }
  }

  /**
   * Gives {@code awaited} up unless an acknowledgement comes within the timeout. A publisher that
   * is frozen, or cut off without a reset, keeps the TCP connection open and answers nothing: the
   * stream would wait for it for good, while another replica leads and marks this node stale.
   */
  private void awaitAck(StreamObserver<InventorySnapshot> awaited) {
    Duration timeout = settings.ackTimeout();
    ackDeadline =
        loop.schedule(
            () -> {
              if (awaited != stream) {
                return;
              }
              ackDeadline = null;
              broken("no acknowledgement from the slice-publisher within " + timeout);
              // the call is cancelled, so that the connection it holds can close
              awaited.onError(
                  Status.DEADLINE_EXCEEDED
                      .withDescription("no acknowledgement within " + timeout)
                      .asRuntimeException());
            },
            timeout.toMillis(),
            TimeUnit.MILLISECONDS);
  }

  /** An acknowledgement came: the deadline runs again only for snapshots sent after it. */
  private void acknowledged(long sequence) {
    if (ackDeadline != null) {
      ackDeadline.cancel(false);
      ackDeadline = null;
    }
    if (sequence < lastSent) {
      awaitAck(stream);
    }
  }

  /**
   * The status and its innermost cause: grpc-java says only "UNAVAILABLE: io exception" for a
   * refused TLS handshake, and the readiness data must say why (a wrong CA, a name not in the
   * publisher's certificate, a plain-text publisher).
   */
  static String describe(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = String.valueOf(t.getMessage());
    return root == t || root.getMessage() == null
        ? message
        : message.lines().findFirst().orElse(message)
            + " ("
            + root.getClass().getSimpleName()
            + ": "
            + root.getMessage()
            + ")";
  }

  private void broken(String why) {
    broken(why, false);
  }

  /**
   * The stream is gone: reconnect on a new connection. The channel's connection is dropped first
   * (enterIdle), so that the next attempt opens a new TCP connection, which kube-proxy routes
   * afresh: the publisher's Service pins a connection to one pod, and a driver that kept its
   * connection to a standby would be refused by it forever.
   *
   * @param standby whether a replica that is not the leader refused the stream
   */
  private void broken(String why, boolean standby) {
    connected = false;
    lastError = why;
    stream = null;
    if (ackDeadline != null) {
      ackDeadline.cancel(false);
      ackDeadline = null;
    }
    if (closed || reconnect != null) {
      return;
    }
    channel.enterIdle();
    logFailure(why);
    if (standby && standbyRefusals++ < STANDBY_QUICK_RETRIES) {
      long initial = Math.max(1, settings.initialBackoff().toMillis());
      long delay = ThreadLocalRandom.current().nextLong(initial / 2, initial + 1);
      reconnect = loop.schedule(this::connect, delay, TimeUnit.MILLISECONDS);
      return;
    }
    reconnect = loop.schedule(this::connect, backoff.toMillis(), TimeUnit.MILLISECONDS);
    backoff =
        backoff.multipliedBy(2).compareTo(settings.maxBackoff()) > 0
            ? settings.maxBackoff()
            : backoff.multipliedBy(2);
  }

  /** Whether {@code t} is a standby's refusal: UNAVAILABLE with the {@link #NOT_LEADER} trailer. */
  static boolean refusedAsStandby(Throwable t) {
    Metadata trailers = Status.trailersFromThrowable(t);
    return Status.fromThrowable(t).getCode() == Status.Code.UNAVAILABLE
        && trailers != null
        && trailers.containsKey(NOT_LEADER);
  }

  private void logFailure(String why) {
    long now = clock.millis();
    String to = settings.address();
    switch (outage.failed(now, why)) {
      case STARTED ->
          LOG.warnf(
              "inventory stream to %s broken (%s); reconnecting with a backoff"
                  + " of up to %s (further attempts are logged at DEBUG)",
              to, why, settings.maxBackoff());
      case NEW_REASON ->
          LOG.warnf(
              "inventory stream to %s still down after %d attempts, now: %s",
              to, outage.failures(), why);
      case STILL_DOWN ->
          LOG.warnf(
              "inventory stream to %s still down after %d attempts in %s"
                  + " (%s): this node's ResourceSlices are not updated; check the slice-publisher's pods"
                  + " and their leader",
              to, outage.failures(), outage.lasted(now), why);
      case QUIET ->
          LOG.debugf(
              "inventory stream to %s: attempt %d failed (%s); next in %s",
              to, outage.failures(), why, backoff);
    }
  }

  /** Publisher acknowledgements; callbacks hop onto the reporter's thread. */
  private final class Acks implements StreamObserver<ReportAck> {
    // The stream these acks belong to; callbacks of an older, replaced stream are ignored.
    StreamObserver<InventorySnapshot> requests;

    private boolean current() {
      return requests != null && requests == stream;
    }

    @Override
    public void onNext(ReportAck ack) {
      loop.execute(
          () -> {
            if (!current()) {
              return;
            }
            acknowledged(ack.getSequence());
            if (ack.getAccepted()) {
              if (!connected && outage.failures() > 0) {
                LOG.infof(
                    "inventory stream to %s connected after %d failed attempts in %s",
                    settings.address(), outage.failures(), outage.lasted(clock.millis()));
              } else if (!connected) {
                LOG.infof("inventory stream to %s connected", settings.address());
              }
              outage.ended();
              standbyRefusals = 0;
              connected = true;
              lastError = "";
              backoff = settings.initialBackoff();
            } else {
              // Refusals name device and field; the next change or heartbeat sends again.
              LOG.errorf(
                  "slice-publisher refused snapshot %d: %s", ack.getSequence(), ack.getError());
            }
          });
    }

    @Override
    public void onError(Throwable t) {
      loop.execute(
          () -> {
            if (current()) {
              broken(describe(t), refusedAsStandby(t));
            }
          });
    }

    @Override
    public void onCompleted() {
      loop.execute(
          () -> {
            if (current()) {
              broken("the publisher closed the stream");
            }
          });
    }
  }

  @Override
  public void close() {
    try {
      loop.submit(
              () -> {
                closed = true;
                if (stream != null) {
                  stream.onCompleted();
                }
              })
          .get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.debugf("closing the inventory stream: %s", e.getMessage());
    }
    // The channel first: its close callbacks still schedule on the loop.
    channel.shutdownNow();
    try {
      channel.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    loop.shutdownNow();
  }
}
