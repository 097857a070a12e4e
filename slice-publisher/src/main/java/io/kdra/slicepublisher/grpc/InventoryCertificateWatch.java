package io.kdra.slicepublisher.grpc;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Ends the process, gracefully, when the inventory gRPC's certificate or key file changes: the
 * gRPC server (grpc-java's, a server of its own) reads them only at start, and a renewed
 * certificate (cert-manager) must be served before the old one expires. The container is
 * started again by the kubelet and serves the new one; with two replicas the other leads
 * meanwhile, and the drivers reconnect (a hand-written watch: Quarkus reloads certificates only
 * for its Vert.x servers).
 */
@ApplicationScoped
public class InventoryCertificateWatch {
  private static final Logger LOG = Logger.getLogger(InventoryCertificateWatch.class);

  @ConfigProperty(name = "quarkus.grpc.server.ssl.certificate")
  Optional<Path> certificate;

  @ConfigProperty(name = "quarkus.grpc.server.ssl.key")
  Optional<Path> key;

  /** Well inside cert-manager's renewal margin (a third of the lifetime by default). */
  static final Duration INTERVAL = Duration.ofSeconds(30);

  private ScheduledExecutorService checker;

  void start(@Observes StartupEvent event) {
    List<Path> files = Stream.of(certificate, key).flatMap(Optional::stream).toList();
    if (files.isEmpty()) {
      return;
    }
    FileStamps atStart = FileStamps.of(files);
    checker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "inventory-certificate-watch");
      t.setDaemon(true);
      return t;
    });
    checker.scheduleWithFixedDelay(() -> {
      List<Path> changed = FileStamps.of(files).changedSince(atStart);
      if (!changed.isEmpty()) {
        LOG.infof("the inventory gRPC's TLS files %s changed: stopping, so that the restarted"
            + " container serves the new certificate", changed);
        checker.shutdown();
        Quarkus.asyncExit(0);
      }
    }, INTERVAL.toMillis(), INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
    LOG.debugf("watching %s every %s", files, INTERVAL);
  }

  void stop(@Observes ShutdownEvent event) {
    if (checker != null) {
      checker.shutdownNow();
    }
  }
}
