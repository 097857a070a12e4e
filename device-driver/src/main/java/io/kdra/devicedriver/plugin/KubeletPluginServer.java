package io.kdra.devicedriver.plugin;

import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.kdra.devicedriver.health.HealthStreams;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jboss.logging.Logger;

/**
 * Serves a {@link DraPlugin} to the kubelet: the DRA service (v1 and v1beta1) and, when given
 * {@link HealthStreams}, the device-health service (v1 and v1alpha1 DRAResourceHealth) on the DRA
 * socket, and the registration service on the registration socket, both plain grpc-java on unix
 * domain sockets named by {@link PluginSockets} (fixed names, or one pair per pod for a rolling
 * update with surge).
 *
 * <p>Why plain grpc-java and not quarkus-grpc: Quarkus serves gRPC on one TCP port (or one HTTP
 * domain socket whose Vert.x stack rejects the path-like {@code :authority} kubelets send), while
 * the kubelet needs two sockets.
 *
 * <p>Order matters: the DRA socket is served before the registration socket appears, because the
 * kubelet dials the endpoint as soon as it sees the registration socket; on stop the registration
 * socket goes first. Stale socket files from a killed predecessor are replaced; on stop only the
 * socket files this server bound are removed, never one that another instance has bound since.
 *
 * <p>Thread-safety: {@link #start()} and {@link #close()} are called from one thread; plugin calls
 * run on a small handler pool and may overlap unless {@code serialize} is set.
 */
public final class KubeletPluginServer implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(KubeletPluginServer.class);
  private static final int HANDLERS = 64;

  /**
   * @param driverName the DRA driver name (socket names, PluginInfo.name)
   * @param registryDir the kubelet plugin registry, e.g. /var/lib/kubelet/plugins_registry
   * @param pluginsDir the kubelet plugins directory, e.g. /var/lib/kubelet/plugins
   * @param serialize handle one DRA call at a time
   * @param podUid the driver pod's UID for per-pod sockets ({@link PluginSockets}); empty for fixed
   *     names
   */
  public record Settings(
      String driverName, Path registryDir, Path pluginsDir, boolean serialize, String podUid) {
    /** Fixed socket names. */
    public Settings(String driverName, Path registryDir, Path pluginsDir, boolean serialize) {
      this(driverName, registryDir, pluginsDir, serialize, "");
    }

    public PluginSockets sockets() {
      return PluginSockets.of(driverName, registryDir, pluginsDir, podUid);
    }
  }

  private final Settings settings;
  private final DraPlugin plugin;
  private final RegistrationState registration;
  private final HealthStreams health;
  private final Path draSocket;
  private final Path registrationSocket;
  private final SocketOwnership ownership;
  private EventLoopGroup loop;
  private ExecutorService handlers;
  private Server draServer;
  private Server registrationServer;
  private DraHealthService healthService;

  /** A server without the health service: the kubelet's health stream gets Unimplemented. */
  public KubeletPluginServer(Settings settings, DraPlugin plugin, RegistrationState registration) {
    this(settings, plugin, registration, null);
  }

  /**
   * @param health the device health the kubelet's NodeWatchResources streams get; null serves no
   *     health service
   */
  public KubeletPluginServer(
      Settings settings, DraPlugin plugin, RegistrationState registration, HealthStreams health) {
    this.settings = settings;
    this.plugin = plugin;
    this.registration = registration;
    this.health = health;
    PluginSockets sockets = settings.sockets();
    this.draSocket = sockets.draSocket();
    this.registrationSocket = sockets.registrationSocket();
    this.ownership = new SocketOwnership(sockets.perPod());
  }

  /** The DRA service socket; also the endpoint reported to the kubelet. */
  public Path draSocket() {
    return draSocket;
  }

  /** The registration socket the kubelet's plugin watcher finds. */
  public Path registrationSocket() {
    return registrationSocket;
  }

  /** Whether both sockets are being served. */
  public synchronized boolean serving() {
    return draServer != null
        && !draServer.isShutdown()
        && registrationServer != null
        && !registrationServer.isShutdown();
  }

  /**
   * Creates the directories and serves both sockets.
   *
   * @throws UncheckedIOException when a directory or socket cannot be created
   */
  public synchronized void start() {
    AtomicInteger n = new AtomicInteger();
    ThreadFactory io = r -> daemon(r, "kubelet-plugin-io");
    loop = new EpollEventLoopGroup(1, io);
    // Handlers mostly wait for the plugin (which bounds the real work itself); too few of them
    // would queue whole calls behind each other when many pods start at once.
    handlers =
        Executors.newFixedThreadPool(
            HANDLERS, r -> daemon(r, "kubelet-plugin-" + n.incrementAndGet()));
    PluginCalls calls = new PluginCalls(plugin, settings.serialize());
    List<ServerServiceDefinition> dra =
        new ArrayList<>(
            List.of(DraServiceV1.definition(calls), DraServiceV1beta1.definition(calls)));
    List<String> services = new ArrayList<>(RegistrationService.SUPPORTED_VERSIONS);
    if (health != null) {
      healthService = new DraHealthService(health);
      dra.addAll(healthService.definitions());
      // Listed like upstream's kubeletplugin helper does: a 1.37+ kubelet opens the health stream
      // only for a listed health service (v1 first); 1.36 and older open v1alpha1 regardless.
      services.addAll(DraHealthService.SERVICES);
    }
    draServer = serve(draSocket, dra);
    registrationServer =
        serve(
            registrationSocket,
            List.of(
                RegistrationService.definition(
                    settings.driverName(), draSocket, services, this::onRegistration)));
    LOG.infof(
        "kubelet plugin %s: DRA service on %s, registration on %s",
        settings.driverName(), draSocket, registrationSocket);
  }

  private void onRegistration(boolean registered, String error) {
    registration.update(registered, error);
    if (registered) {
      LOG.infof("kubelet accepted plugin %s", settings.driverName());
    } else {
      LOG.errorf("kubelet refused plugin %s: %s", settings.driverName(), error);
      plugin.handleError("kubelet refused the registration: " + error, null);
    }
  }

  private Server serve(Path socket, List<ServerServiceDefinition> services) {
    try {
      return ownership.bind(
          socket,
          at -> {
            NettyServerBuilder builder =
                NettyServerBuilder.forAddress(new DomainSocketAddress(at.toString()))
                    .channelType(EpollServerDomainSocketChannel.class)
                    .bossEventLoopGroup(loop)
                    .workerEventLoopGroup(loop)
                    .executor(handlers);
            services.forEach(builder::addService);
            return builder.build().start();
          });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot serve " + socket + ": " + e.getMessage(), e);
    }
  }

  /** Stops serving and removes both socket files; idempotent. */
  @Override
  public synchronized void close() {
    // Registration first, so the kubelet stops routing calls here before the endpoint goes.
    stop(registrationServer, registrationSocket);
    // Health streams never end by themselves; end them so that the DRA server can stop at once.
    if (healthService != null) {
      healthService.close();
      healthService = null;
    }
    stop(draServer, draSocket);
    registrationServer = null;
    draServer = null;
    registration.reset();
    if (handlers != null) {
      handlers.shutdown();
      handlers = null;
    }
    if (loop != null) {
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      loop = null;
    }
  }

  private void stop(Server server, Path socket) {
    if (server != null) {
      server.shutdown();
      try {
        if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
          server.shutdownNow();
        }
      } catch (InterruptedException e) {
        server.shutdownNow();
        Thread.currentThread().interrupt();
      }
    } else {
      return; // not serving: nothing of ours to remove
    }
    try {
      if (!ownership.removeIfOurs(socket)) {
        // another instance bound the same name since (fixed names, a replacement started early):
        // the kubelet is talking to it now
        LOG.infof("%s belongs to another instance now; leaving it", socket);
      }
    } catch (IOException e) {
      LOG.warnf("cannot remove %s: %s", socket, e.getMessage());
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
