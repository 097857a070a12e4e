package io.kdra.devicedriver.discovery;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * Runs a {@link DiscoveryBackend} periodically and keeps the latest inventory. Change listeners
 * hear of every change (not of unchanged passes); pass listeners hear of every pass, failed ones
 * included (device health reporting needs both "unchanged, still checked" and "cannot tell now"). A
 * failed pass keeps the previous inventory: devices do not vanish from the cluster because
 * nvidia-smi hiccuped once; the error is logged and shown by {@link #lastError()}.
 *
 * <p>Thread-safe; listeners run on the discovery thread and must not block for long.
 */
public final class InventoryWatcher implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(InventoryWatcher.class);

  private final DiscoveryBackend backend;
  private final Clock clock;
  private final Instant created;
  private final List<Consumer<Inventory>> listeners = new CopyOnWriteArrayList<>();
  private final List<Consumer<DiscoveryPass>> passListeners = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "discovery");
            t.setDaemon(true);
            return t;
          });
  private volatile Inventory current = Inventory.EMPTY;
  private volatile String lastError = "";
  private volatile boolean discovered;
  private volatile DiscoveryPass lastPass;
  private volatile Instant progress;
  private volatile Instant lastDiscovered;

  public InventoryWatcher(DiscoveryBackend backend) {
    this(backend, Clock.systemUTC());
  }

  /**
   * @param clock stamps each {@link DiscoveryPass}
   */
  public InventoryWatcher(DiscoveryBackend backend, Clock clock) {
    this.backend = backend;
    this.clock = clock;
    this.created = clock.instant();
  }

  /** Runs one pass now (so the driver starts with devices) and then every {@code interval}. */
  public void start(Duration interval) {
    runPass();
    long ms = Math.max(100, interval.toMillis());
    timer.scheduleWithFixedDelay(this::runPass, ms, ms, TimeUnit.MILLISECONDS);
  }

  /**
   * One scheduled pass. {@code scheduleWithFixedDelay} cancels a task for good at its first throw,
   * so nothing may escape here but the virtual machine's own errors (out of memory, stack
   * overflow): after those the process is not to be trusted, and a discovery that stops is what the
   * driver's liveness check notices (no pass finishes any more), so that the kubelet restarts it.
   */
  private void runPass() {
    try {
      refresh();
    } catch (VirtualMachineError e) {
      LOG.fatalf(e, "%s discovery stopped", backend.name());
      throw e;
    } catch (Throwable e) {
      LOG.errorf(e, "%s discovery pass failed unexpectedly", backend.name());
    }
  }

  /** Runs one discovery pass; public for tests and for a manual refresh. */
  public synchronized void refresh() {
    Inventory next;
    try {
      next = backend.discover();
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable e) {
      // Any other throw is a failed pass, also one without a message: lastError must not be
      // empty then, as empty means the pass succeeded.
      String error = describe(e);
      if (!error.equals(lastError)) {
        LOG.errorf("%s discovery failed: %s", backend.name(), error);
      }
      lastError = error;
      passed();
      return;
    }
    if (!lastError.isEmpty()) {
      LOG.infof("%s discovery works again", backend.name());
    }
    lastError = "";
    boolean changed = !discovered || !next.equals(current);
    current = next;
    discovered = true;
    lastDiscovered = clock.instant();
    if (changed) {
      LOG.infof("%s discovery: %d devices", backend.name(), next.devices().size());
      for (Consumer<Inventory> l : listeners) {
        try {
          l.accept(next);
        } catch (RuntimeException e) {
          LOG.errorf(e, "inventory listener failed");
        }
      }
    }
    passed();
  }

  /** The exception's message, or its class when it has none (or a blank one). */
  static String describe(Throwable e) {
    String message = e.getMessage();
    return message == null || message.isBlank() ? e.getClass().getName() : message;
  }

  private void passed() {
    Instant now = clock.instant();
    DiscoveryPass pass = new DiscoveryPass(current, discovered, lastError, now);
    lastPass = pass;
    progress = now;
    for (Consumer<DiscoveryPass> l : passListeners) {
      try {
        l.accept(pass);
      } catch (RuntimeException e) {
        LOG.errorf(e, "discovery pass listener failed");
      }
    }
  }

  /** The latest inventory (empty before the first successful pass). */
  public Inventory current() {
    return current;
  }

  /** Whether a pass has ever succeeded. */
  public boolean discovered() {
    return discovered;
  }

  /** When the last successful pass ended; empty before the first. */
  public Optional<Instant> lastDiscovered() {
    return Optional.ofNullable(lastDiscovered);
  }

  /**
   * When discovery last made progress: the end of the last pass, failed or not, or the start of the
   * watcher before any pass ended. A pass that hangs, or a periodic task that died, leaves it
   * behind.
   */
  public Instant lastProgress() {
    Instant p = progress;
    return p != null ? p : created;
  }

  /** The last pass's error, empty if it succeeded. */
  public String lastError() {
    return lastError;
  }

  /** Adds a listener; it is called with the current inventory right away if there is one. */
  public void onChange(Consumer<Inventory> listener) {
    listeners.add(listener);
    if (discovered) {
      listener.accept(current);
    }
  }

  /**
   * Adds a listener for every pass; it is called with the last pass right away if there was one. A
   * listener added while a pass runs may hear that pass twice, or the older one after it.
   */
  public void onPass(Consumer<DiscoveryPass> listener) {
    passListeners.add(listener);
    DiscoveryPass pass = lastPass;
    if (pass != null) {
      listener.accept(pass);
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
