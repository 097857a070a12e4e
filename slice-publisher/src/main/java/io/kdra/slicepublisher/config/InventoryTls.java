package io.kdra.slicepublisher.config;

import io.kdra.slicepublisher.grpc.CertificateValidity;
import io.kdra.slicepublisher.grpc.ReloadingKeyManager;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.grpc.api.ServerBuilderCustomizer;
import io.quarkus.grpc.runtime.config.GrpcServerConfiguration;
import io.quarkus.runtime.ShutdownEvent;
import io.vertx.core.Vertx;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.grpc.VertxServerBuilder;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The inventory gRPC server's TLS ({@code kdra.slice-publisher.inventory-tls.*}), with a key
 * manager that reads the certificate and key files again every {@code reload-period} ({@link
 * ReloadingKeyManager}), consulted at every handshake: a renewed certificate (cert-manager's, the
 * kubelet updating the Secret's volume) is served to new connections without a restart, while open
 * streams go on. Quarkus's own {@code quarkus.grpc.server.ssl.*} reads the files once, at start,
 * and would replace these key options: the chart sets {@code kdra.slice-publisher.inventory-tls.*}
 * and {@code quarkus.grpc.server.plain-text=false} instead. Hand-written, small: grpc-java's
 * AdvancedTlsX509KeyManager reads PKCS#8 keys only (the chart's own are PKCS#1) and no more often
 * than once a minute.
 */
@ApplicationScoped
public class InventoryTls implements ServerBuilderCustomizer<VertxServerBuilder> {
  private static final Logger LOG = Logger.getLogger(InventoryTls.class);

  private final PublisherConfig.InventoryTls config;
  private final Vertx vertx;
  private final MeterRegistry registry;
  private final Clock clock;
  private ScheduledExecutorService reloader;

  @Inject
  public InventoryTls(PublisherConfig config, Vertx vertx, MeterRegistry registry, Clock clock) {
    this.config = config.inventoryTls();
    this.vertx = vertx;
    this.registry = registry;
    this.clock = clock;
  }

  @Override
  public void customize(GrpcServerConfiguration grpc, VertxServerBuilder builder) {
    if (config.certificate().isEmpty() || config.key().isEmpty()) {
      return;
    }
    Path certificate = config.certificate().get();
    Path key = config.key().get();
    // Vert.x's PEM reading: PKCS#1, PKCS#8 and SEC1 keys; a bad file fails the start
    ReloadingKeyManager keys =
        new ReloadingKeyManager(
            () ->
                new PemKeyCertOptions()
                    .setCertPath(certificate.toString())
                    .setKeyPath(key.toString())
                    .getKeyManagerFactory(vertx));
    reloader =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "inventory-tls-reload");
              t.setDaemon(true);
              return t;
            });
    long period = config.reloadPeriod().toMillis();
    reloader.scheduleWithFixedDelay(
        () -> {
          try {
            if (keys.reload()) {
              LOG.infof("the inventory gRPC serves the certificate now in %s", certificate);
              warnIfInvalid(keys, certificate);
            }
          } catch (Exception e) {
            LOG.warnf(
                "reading the inventory gRPC's TLS files %s and %s again: %s; serving the"
                    + " certificate read before",
                certificate, key, e.toString());
          }
        },
        period,
        period,
        TimeUnit.MILLISECONDS);
    warnIfInvalid(keys, certificate);
    Gauge.builder(
            "kdra.publisher.tls.certificate.expiry.seconds",
            () -> CertificateValidity.secondsLeft(keys.served(), clock.instant()))
        .strongReference(true)
        .description(
            "Seconds until the certificate the inventory gRPC serves expires (negative: expired);"
                + " follows the files as they are read again")
        .register(registry);
    builder.useSsl(options -> options.setSsl(true).setKeyCertOptions(KeyCertOptions.wrap(keys)));
    LOG.infof(
        "the inventory gRPC serves TLS with %s, read again every %s",
        certificate, config.reloadPeriod());
  }

  /**
   * Said at start and at each new certificate: an expired one is still served (there is no other),
   * and the drivers' refusals name it too, but the cause is here.
   */
  private void warnIfInvalid(ReloadingKeyManager keys, Path certificate) {
    CertificateValidity.problem(keys.served(), clock.instant())
        .ifPresent(p -> LOG.warnf("the inventory gRPC's TLS file %s: %s", certificate, p));
  }

  void stop(@Observes ShutdownEvent event) {
    if (reloader != null) {
      reloader.shutdownNow();
    }
  }
}
