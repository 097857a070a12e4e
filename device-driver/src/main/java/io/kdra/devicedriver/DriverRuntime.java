package io.kdra.devicedriver;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.config.DriverConfig;
import io.kdra.devicedriver.discovery.DiscoveryBackend;
import io.kdra.devicedriver.discovery.DiscoveryException;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.InventoryWatcher;
import io.kdra.devicedriver.discovery.MigMode;
import io.kdra.devicedriver.discovery.NvidiaBackend;
import io.kdra.devicedriver.discovery.SimulatedBackend;
import io.kdra.devicedriver.discovery.TpuBackend;
import io.kdra.devicedriver.health.HealthReporting;
import io.kdra.devicedriver.health.HealthStreams;
import io.kdra.devicedriver.observability.ClaimMetricsAndSpans;
import io.kdra.devicedriver.plugin.DraPlugin;
import io.kdra.devicedriver.plugin.KubeletPluginServer;
import io.kdra.devicedriver.plugin.RegistrationState;
import io.kdra.devicedriver.prepare.CdiSpecStore;
import io.kdra.devicedriver.prepare.CheckpointStore;
import io.kdra.devicedriver.prepare.ClaimReader;
import io.kdra.devicedriver.prepare.DeviceDriver;
import io.kdra.devicedriver.prepare.DeviceSetup;
import io.kdra.devicedriver.prepare.KubernetesClaimReader;
import io.kdra.devicedriver.prepare.PreparePlanner;
import io.kdra.devicedriver.prepare.StaleClaimCleanup;
import io.kdra.devicedriver.publisher.InventoryReporter;
import io.kdra.devicedriver.sharing.CommandRunner;
import io.kdra.devicedriver.sharing.GpuSharingSetup;
import io.kdra.devicedriver.sharing.MigSetup;
import io.kdra.devicedriver.sharing.ProcessCommandRunner;
import io.kdra.devicedriver.sharing.RecordingCommandRunner;
import io.kdra.devicedriver.sharing.SharedGpus;
import io.kdra.devicedriver.sharing.SharingSettings;
import io.kdra.devicedriver.sharing.SimulatedNvidiaSmi;
import io.kdra.devicedriver.status.DeviceStatusPlugin;
import io.kdra.devicedriver.status.DeviceStatusReporter;
import io.kdra.devicedriver.status.KubernetesClaimStatusStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Tracer;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Wires the pure parts into a running node agent: discovery, then the driver (checkpoint restored,
 * CDI specs re-materialised), then the kubelet sockets, then the publisher stream; and takes it
 * down in reverse. The only class that knows about Quarkus, config and the API client.
 */
@ApplicationScoped
public class DriverRuntime {
  private static final Logger LOG = Logger.getLogger(DriverRuntime.class);
  // a conflict is another writer of the same claim (the claim-controller); a few rounds settle it
  private static final int STATUS_WRITE_ATTEMPTS = 5;

  @Inject DriverConfig config;
  @Inject KubernetesClient client;
  @Inject MeterRegistry registry;
  @Inject Tracer tracer;

  private final RegistrationState registration = new RegistrationState();
  private InventoryWatcher inventory;
  private HealthStreams health;
  private DeviceDriver driver;
  private KubeletPluginServer server;
  private InventoryReporter reporter;
  private StaleClaimCleanup staleClaims;

  void start(@Observes StartupEvent event) {
    refuseSimulatedStateOnRealDevices();
    inventory = new InventoryWatcher(sharing(backend()));
    inventory.start(config.discoveryInterval());
    // Every pass, failed ones too, feeds the kubelet's health streams (KEP-4680); the pool of
    // every device is this node's.
    health =
        new HealthStreams(
            HealthReporting.forDiscoveryEvery(config.nodeName(), config.discoveryInterval()));
    inventory.onPass(health::onPass);
    CheckpointStore checkpoint;
    try {
      checkpoint = CheckpointStore.open(config.checkpointFile(), Clock.systemUTC());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ClaimReader claims = new KubernetesClaimReader(client);
    driver =
        new DeviceDriver(
            planner(),
            claims,
            inventory::current,
            new CdiSpecStore(config.cdiDir()),
            checkpoint,
            new ClaimMetricsAndSpans(registry, tracer, config.name()),
            Clock.systemUTC(),
            config.prepareConcurrency(),
            testOnlyInterlude(),
            pluginSettings().sockets().lockFile());
    int restored = driver.restore();
    LOG.infof(
        "driver %s on node %s: %d prepared claims restored from %s",
        config.name(), config.nodeName(), restored, config.checkpointFile());
    startStaleClaimCleanup(claims);
    server =
        new KubeletPluginServer(pluginSettings(), claimDeviceStatus(driver), registration, health);
    server.start();
    config
        .publisher()
        .address()
        .ifPresent(
            address -> {
              DriverConfig.Publisher p = config.publisher();
              reporter =
                  new InventoryReporter(
                      new InventoryReporter.Settings(
                          config.name(),
                          config.nodeName(),
                          address,
                          p.tokenFile(),
                          p.initialBackoff(),
                          p.maxBackoff(),
                          p.heartbeat(),
                          p.tls()
                              .caFile()
                              .map(ca -> new InventoryReporter.Tls(ca, p.tls().serverName())),
                          p.ackTimeout(),
                          config.skipNodeOperations().orElse(List.of())),
                      Clock.systemUTC(),
                      new InventoryReporter.Discovery(
                          config.discoveryInterval(), inventory::lastDiscovered));
              // Nothing is sent before discovery has succeeded once: an empty snapshot would make
              // the
              // publisher withdraw every device of this node because nvidia-smi failed at startup.
              reporter.start(null);
              inventory.onChange(reporter::report);
            });
  }

  void stop(@Observes ShutdownEvent event) {
    if (reporter != null) {
      reporter.close();
    }
    if (staleClaims != null) {
      staleClaims.close();
    }
    if (server != null) {
      server.close();
    }
    if (driver != null) {
      driver.close();
    }
    if (inventory != null) {
      inventory.close();
    }
  }

  private KubeletPluginServer.Settings pluginSettings() {
    return new KubeletPluginServer.Settings(
        config.name(),
        config.kubeletRegistryDir(),
        config.kubeletPluginsDir(),
        config.serialize(),
        config.podUid().orElse(""));
  }

  private void startStaleClaimCleanup(ClaimReader claims) {
    DriverConfig.StaleClaims s = config.staleClaims();
    if (s.checkInterval().isZero() || s.checkInterval().isNegative()) {
      LOG.info(
          "kdra.device-driver.stale-claims.check-interval=0s: claims the kubelet never unprepares stay");
      return;
    }
    staleClaims =
        new StaleClaimCleanup(
            driver, claims, config.name(), config.nodeName(), s.grace(), Clock.systemUTC());
    staleClaims.start(s.checkInterval());
  }

  private PreparePlanner planner() {
    PreparePlanner planner = new PreparePlanner(config.name(), config.nodeName(), deviceSetup());
    // the driver's own directory, mounted at the same path as on the host (the CDI mount's source)
    return config.deviceMetadata()
        ? planner.withDeviceMetadata(config.kubeletPluginsDir().resolve(config.name()))
        : planner;
  }

  /** The driver, reporting its claims' device status unless that is off. */
  private DraPlugin claimDeviceStatus(DeviceDriver plugin) {
    if (!config.claimDeviceStatus()) {
      LOG.info(
          "kdra.device-driver.claim-device-status=false: claims' status.devices are not written");
      return plugin;
    }
    return new DeviceStatusPlugin(
        plugin,
        new DeviceStatusReporter(
            new KubernetesClaimStatusStore(client),
            config.name(),
            config.nodeName(),
            Clock.systemUTC(),
            STATUS_WRITE_ATTEMPTS));
  }

  /** The end-to-end tests' pause inside prepare; only on simulated devices, loudly. */
  private DeviceDriver.PrepareInterlude testOnlyInterlude() {
    Duration delay = config.testOnly().prepareDelay();
    if (delay.isZero()) {
      return DeviceDriver.PrepareInterlude.NONE;
    }
    if (config.backend() != DriverConfig.Backend.simulated) {
      throw new IllegalStateException(
          "kdra.device-driver.test-only.prepare-delay="
              + delay
              + " is for end-to-end tests on simulated devices; unset it with kdra.device-driver.backend="
              + config.backend());
    }
    LOG.warnf(
        "kdra.device-driver.test-only.prepare-delay=%s: every prepare pauses between CDI spec and "
            + "checkpoint (end-to-end tests only)",
        delay);
    return DeviceDriver.PrepareInterlude.pause(delay);
  }

  /** The simulated GPUs; kept in a file only for the end-to-end tests. */
  private SimulatedNvidiaSmi simulatedGpus() {
    return config
        .testOnly()
        .simulatedGpuStateFile()
        .map(
            file -> {
              LOG.warnf(
                  "kdra.device-driver.test-only.simulated-gpu-state-file=%s: the simulated GPUs'"
                      + " state is kept there (end-to-end tests only)",
                  file);
              return SimulatedNvidiaSmi.persistedIn(file);
            })
        .orElseGet(SimulatedNvidiaSmi::new);
  }

  /** The end-to-end tests' state file of simulated GPUs; only on simulated devices, loudly. */
  private void refuseSimulatedStateOnRealDevices() {
    config
        .testOnly()
        .simulatedGpuStateFile()
        .filter(f -> config.backend() != DriverConfig.Backend.simulated)
        .ifPresent(
            f -> {
              throw new IllegalStateException(
                  "kdra.device-driver.test-only.simulated-gpu-state-file="
                      + f
                      + " is for end-to-end tests on simulated devices; unset it with"
                      + " kdra.device-driver.backend="
                      + config.backend());
            });
  }

  private SharingSettings sharingSettings() {
    DriverConfig.Sharing s = config.sharing();
    return new SharingSettings(
        s.strategy(),
        s.shares(),
        Quantity.parse(s.memoryStep()),
        s.mpsRoot(),
        s.mpsAcrossNamespaces());
  }

  /** The backend's inventory with whole GPUs made shareable, as the node's sharing says. */
  private DiscoveryBackend sharing(DiscoveryBackend backend) {
    SharingSettings settings = sharingSettings();
    if (!settings.shared()) {
      return backend;
    }
    LOG.infof("GPUs are shared: %s, %d shares each", settings.strategy(), settings.shares());
    return new DiscoveryBackend() {
      @Override
      public String name() {
        return backend.name();
      }

      @Override
      public Inventory discover() throws DiscoveryException {
        return SharedGpus.apply(backend.discover(), settings);
      }
    };
  }

  /**
   * What prepare does to the hardware: on simulated devices the commands are recorded and logged,
   * not run.
   */
  private DeviceSetup deviceSetup() {
    SharingSettings settings = sharingSettings();
    CommandRunner runner =
        config.backend() == DriverConfig.Backend.simulated
            ? new RecordingCommandRunner().answer(simulatedGpus())
            : new ProcessCommandRunner(config.nvidia().timeout());
    List<DeviceSetup> setups = new ArrayList<>();
    if (settings.shared()) {
      setups.add(
          new GpuSharingSetup(
              settings, runner, config.nvidia().smiPath(), config.sharing().mpsControlPath()));
    }
    if (config.migMode() != MigMode.OFF) {
      setups.add(
          new MigSetup(
              config.migMode(), runner, config.nvidia().smiPath(), config.nvidia().hostRoot()));
    }
    return DeviceSetup.all(setups);
  }

  private DiscoveryBackend backend() {
    return switch (config.backend()) {
      case simulated ->
          new SimulatedBackend(config.inventoryFile(), config.inventoryAllowAnyDeviceNode());
      case nvidia ->
          new NvidiaBackend(
              config.nvidia().smiPath(),
              config.nvidia().timeout(),
              config.nvidia().hostRoot(),
              config.migMode());
      case tpu ->
          new TpuBackend(
              config.tpu().hostRoot(),
              config.tpu().acceleratorType(),
              config.tpu().topology(),
              this::nodeLabels);
    };
  }

  // The TPU type and topology come from GKE node labels when not configured. GKE sets them at
  // node creation, so they are read until a read succeeds, not on every discovery pass.
  private volatile Map<String, String> nodeLabels;

  private Map<String, String> nodeLabels() {
    Map<String, String> known = nodeLabels;
    if (known != null) {
      return known;
    }
    try {
      known =
          Optional.ofNullable(client.nodes().withName(config.nodeName()).get())
              .map(n -> n.getMetadata().getLabels())
              .orElse(Map.of());
      nodeLabels = known;
      return known;
    } catch (RuntimeException e) {
      LOG.warnf("cannot read labels of node %s: %s", config.nodeName(), e.getMessage());
      return Map.of();
    }
  }

  /** For health checks. */
  public RegistrationState registration() {
    return registration;
  }

  /** For health checks; null before startup. */
  public KubeletPluginServer server() {
    return server;
  }

  /** For health checks; null when no publisher is configured. */
  public InventoryReporter reporter() {
    return reporter;
  }

  /** The device health the kubelet's streams get; null before startup. */
  public HealthStreams health() {
    return health;
  }

  /** For health checks; null before startup. */
  public InventoryWatcher inventory() {
    return inventory;
  }
}
