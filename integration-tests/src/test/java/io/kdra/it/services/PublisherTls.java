package io.kdra.it.services;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.kdra.inventory.v1.InventoryGrpc;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.inventory.v1.ReportAck;
import java.io.ByteArrayInputStream;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/** What a client of the slice-publisher's inventory gRPC port sees of its TLS. */
public final class PublisherTls {

  private PublisherTls() {}

  /**
   * The certificate {@code host:port} presents to a client that asks for {@code serverName} and
   * trusts only {@code caCrtBase64} (a Secret's {@code ca.crt}); the handshake fails unless it
   * chains to that CA.
   */
  public static X509Certificate served(String host, int port, String serverName, String caCrtBase64)
      throws Exception {
    X509Certificate ca =
        (X509Certificate)
            CertificateFactory.getInstance("X.509")
                .generateCertificate(
                    new ByteArrayInputStream(Base64.getDecoder().decode(caCrtBase64)));
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca);
    TrustManagerFactory factory =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, factory.getTrustManagers(), null);
    try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(host, port)) {
      SSLParameters parameters = socket.getSSLParameters();
      parameters.setServerNames(List.of(new SNIHostName(serverName)));
      parameters.setApplicationProtocols(new String[] {"h2"});
      socket.setSSLParameters(parameters);
      socket.startHandshake();
      return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }
  }

  /** The names in the certificate's subjectAltName. */
  public static List<String> names(X509Certificate certificate) throws Exception {
    return certificate.getSubjectAlternativeNames().stream()
        .map(n -> String.valueOf(n.get(1)))
        .toList();
  }

  /**
   * The status with which a plain-text client's inventory stream to {@code host:port} ends, or null
   * when the publisher answered it.
   */
  public static Status plainTextStream(String host, int port, String driver, String node)
      throws Exception {
    ManagedChannel plain = NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
    try {
      CompletableFuture<Throwable> ended = new CompletableFuture<>();
      StreamObserver<InventorySnapshot> stream =
          InventoryGrpc.newStub(plain)
              .report(
                  new StreamObserver<>() {
                    @Override
                    public void onNext(ReportAck ack) {
                      ended.complete(null);
                    }

                    @Override
                    public void onError(Throwable t) {
                      ended.complete(t);
                    }

                    @Override
                    public void onCompleted() {
                      ended.complete(null);
                    }
                  });
      stream.onNext(InventorySnapshot.newBuilder().setDriver(driver).setNodeName(node).build());
      Throwable error = ended.get(60, TimeUnit.SECONDS);
      return error == null ? null : Status.fromThrowable(error);
    } finally {
      plain.shutdownNow();
    }
  }
}
