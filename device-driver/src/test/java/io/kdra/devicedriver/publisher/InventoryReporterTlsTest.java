package io.kdra.devicedriver.publisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.kdra.devicedriver.testing.Inventories;
import io.kdra.devicedriver.testing.TestCertificates;
import io.kdra.inventory.v1.InventoryGrpc;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.inventory.v1.ReportAck;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The inventory stream over TLS against a fake publisher serving a certificate for its Service's
 * name on 127.0.0.1: the driver verifies it against the CA file (by the configured server name, as
 * the chart sets it), refuses a certificate of another CA, and picks up a rotated CA file without a
 * restart.
 */
class InventoryReporterTlsTest {
  private static final String SERVICE = "kdra-slice-publisher.kdra-system.svc";

  @TempDir Path dir;
  private final BlockingQueue<InventorySnapshot> received = new LinkedBlockingQueue<>();
  private final TestCertificates publisherCa = TestCertificates.ca("publisher-ca");
  private Server server;
  private InventoryReporter reporter;
  private int port;

  @BeforeEach
  void publisherWithTls() throws Exception {
    Path certificate = publisherCa.issueServer(SERVICE, dir);
    ServerServiceDefinition service =
        ServerServiceDefinition.builder(InventoryGrpc.getServiceDescriptor())
            .addMethod(
                InventoryGrpc.getReportMethod(),
                ServerCalls.asyncBidiStreamingCall(
                    acks ->
                        new StreamObserver<InventorySnapshot>() {
                          @Override
                          public void onNext(InventorySnapshot s) {
                            received.add(s);
                            acks.onNext(
                                ReportAck.newBuilder()
                                    .setSequence(s.getSequence())
                                    .setAccepted(true)
                                    .build());
                          }

                          @Override
                          public void onError(Throwable t) {}

                          @Override
                          public void onCompleted() {
                            acks.onCompleted();
                          }
                        }))
            .build();
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .sslContext(
                GrpcSslContexts.forServer(
                        certificate.toFile(), dir.resolve(SERVICE + ".key").toFile())
                    .build())
            .addService(service)
            .build()
            .start();
    port = server.getPort();
    Files.writeString(dir.resolve("token"), "secret-token\n");
  }

  @AfterEach
  void stop() {
    if (reporter != null) {
      reporter.close();
    }
    server.shutdownNow();
  }

  private InventoryReporter reporter(Optional<InventoryReporter.Tls> tls) {
    return new InventoryReporter(
        new InventoryReporter.Settings(
            "gpu.kdra.io",
            "node-a",
            "127.0.0.1:" + port,
            dir.resolve("token"),
            Duration.ofMillis(50),
            Duration.ofMillis(200),
            Duration.ofMinutes(10),
            tls,
            InventoryReporter.DEFAULT_ACK_TIMEOUT),
        Clock.fixed(Instant.ofEpochMilli(1000), ZoneOffset.UTC));
  }

  @Test
  void streamsOverTlsToTheCertificateOfTheServiceName() throws Exception {
    reporter =
        reporter(
            Optional.of(
                new InventoryReporter.Tls(
                    publisherCa.writeCertificate(dir), Optional.of(SERVICE))));
    reporter.start(Inventories.gpus(1));
    assertThat(received.poll(60, TimeUnit.SECONDS)).isNotNull();
    await().atMost(Duration.ofSeconds(10)).until(reporter::connected);
  }

  @Test
  void refusesAPublisherWhoseCertificateNamesAnotherHost() {
    reporter =
        reporter(
            Optional.of(
                new InventoryReporter.Tls(publisherCa.writeCertificate(dir), Optional.empty())));
    reporter.start(Inventories.gpus(1));
    // dialled as 127.0.0.1, which the certificate does not name
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(reporter.lastError()).containsIgnoringCase("127.0.0.1"));
    assertThat(received).isEmpty();
    assertThat(reporter.connected()).isFalse();
  }

  @Test
  void refusesACertificateOfAnotherCaAndTrustsTheRotatedCaFileWithoutARestart() throws Exception {
    Path caFile = dir.resolve("ca.crt");
    Files.copy(TestCertificates.ca("other-ca").writeCertificate(dir), caFile);
    reporter = reporter(Optional.of(new InventoryReporter.Tls(caFile, Optional.of(SERVICE))));
    reporter.start(Inventories.gpus(1));
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> assertThat(reporter.lastError()).containsIgnoringCase("certification path"));
    assertThat(received).isEmpty();

    // the kubelet replaced the mounted Secret's file with the publisher's CA
    Files.copy(publisherCa.writeCertificate(dir), caFile, StandardCopyOption.REPLACE_EXISTING);
    assertThat(received.poll(60, TimeUnit.SECONDS)).isNotNull();
    await().atMost(Duration.ofSeconds(10)).until(reporter::connected);
  }

  @Test
  void aMissingCaFileIsAReasonToRetryNotACrash() throws Exception {
    Path caFile = dir.resolve("not-yet.crt");
    reporter = reporter(Optional.of(new InventoryReporter.Tls(caFile, Optional.of(SERVICE))));
    reporter.start(Inventories.gpus(1));
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(reporter.lastError())
                    .contains("NoSuchFileException")
                    .contains(caFile.toString()));
    Files.copy(publisherCa.writeCertificate(dir), caFile);
    assertThat(received.poll(60, TimeUnit.SECONDS)).isNotNull();
  }

  @Test
  void aPlainTextDriverGetsNoStreamFromATlsPublisher() {
    reporter = reporter(Optional.empty());
    reporter.start(Inventories.gpus(1));
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(reporter.lastError()).isNotEqualTo("not connected yet"));
    assertThat(received).isEmpty();
    assertThat(reporter.connected()).isFalse();
  }
}
