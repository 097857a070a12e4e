package io.kdra.devicedriver.prepare;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.DraPlugin;
import io.kdra.devicedriver.plugin.PrepareResult;
import io.kdra.devicedriver.prepare.ClaimTelemetry.Operation;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.jboss.logging.Logger;

/**
 * The driver's {@link DraPlugin}: read the claim, plan with {@link PreparePlanner}, apply (CDI
 * spec, then checkpoint), answer. All {@link DraPlugin} guarantees hold:
 *
 * <ul>
 *   <li>Idempotent: a claim in the checkpoint is answered from it (its CDI spec rewritten if it
 *       vanished, e.g. {@code /var/run/cdi} on tmpfs after a reboot) without reading the API.
 *   <li>Restart-safe: the CDI file name depends on the UID alone, so an unprepare in any process
 *       removes it, checkpoint entry or not. The spec is written before the checkpoint entry, so a
 *       crash in between leaves a file that the retry rewrites identically or the unprepare
 *       removes; never an entry without its file.
 *   <li>Concurrent: claims run on a pool of {@code concurrency} threads; two operations on the same
 *       UID never overlap (lock striping by UID: unrelated claims rarely share a stripe, and a
 *       fixed array cannot leak locks).
 *   <li>Per-claim errors: every failure is a message naming the claim and the cause.
 *   <li>Shared across processes: during a rolling update two driver pods serve the node, and the
 *       kubelet may prepare a claim on one and unprepare it on the other. Every operation on the
 *       node's state holds a {@link SharedStateLock} on {@code serialize.lock}; the process that
 *       takes it re-reads the checkpoint first, and forgets the device state it remembers when the
 *       other changed the checkpoint. The fence's in-flight reservations need no sharing: while one
 *       process holds the lock, the other has no prepare in flight.
 * </ul>
 */
public final class DeviceDriver implements DraPlugin, AutoCloseable {
  private static final Logger LOG = Logger.getLogger(DeviceDriver.class);
  private static final int STRIPES = 64;

  private final PreparePlanner planner;
  private final ClaimReader reader;
  private final Supplier<Inventory> inventory;
  private final CdiSpecStore cdi;
  private final CheckpointStore checkpoint;
  private final SetupJournal journal;
  private final SetupIntents intents;
  private final ClaimTelemetry telemetry;
  private final Clock clock;
  private final ExecutorService pool;
  private final ReentrantLock[] locks = new ReentrantLock[STRIPES];
  private final PrepareInterlude interlude;
  // Held while a claim is planned and checkpointed or released and removed, on nodes with a
  // DeviceSetup: whether a claim is the last user of a shared GPU (stop its MPS daemon) is decided
  // from the checkpoint, so those steps must not interleave.
  private final ReentrantLock setupLock = new ReentrantLock();
  private final DeviceReservations reservations = new DeviceReservations();
  private final SharedStateLock shared;
  private final NodeStateRecovery recovery;

  /**
   * Runs inside a prepare between the claim's CDI spec and its checkpoint entry: the one window in
   * which a crash leaves half a preparation behind (a spec without an entry). Only the end-to-end
   * tests use it, to kill the driver exactly there ({@code
   * kdra.device-driver.test-only.prepare-delay}).
   */
  @FunctionalInterface
  public interface PrepareInterlude {
    PrepareInterlude NONE = claim -> {};

    void afterCdiSpec(ClaimRef claim) throws InterruptedException;

    /** A pause of {@code delay} with a log line naming the claim, or {@link #NONE} for zero. */
    static PrepareInterlude pause(Duration delay) {
      if (delay.isZero() || delay.isNegative()) {
        return NONE;
      }
      return claim -> {
        LOG.warnf(
            "test-only prepare delay: holding %s for %s between CDI spec and checkpoint",
            claim, delay);
        Thread.sleep(delay.toMillis());
      };
    }
  }

  /**
   * @param inventory the node's current devices (read once per claim planned)
   * @param concurrency how many claims are worked on at once, over all calls
   */
  public DeviceDriver(
      PreparePlanner planner,
      ClaimReader reader,
      Supplier<Inventory> inventory,
      CdiSpecStore cdi,
      CheckpointStore checkpoint,
      ClaimTelemetry telemetry,
      Clock clock,
      int concurrency) {
    this(
        planner,
        reader,
        inventory,
        cdi,
        checkpoint,
        telemetry,
        clock,
        concurrency,
        PrepareInterlude.NONE,
        checkpoint.file().toAbsolutePath().resolveSibling("serialize.lock"));
  }

  /**
   * As the other constructor, with a pause inside every prepare (end-to-end tests only) and the
   * lock file every driver process on the node shares.
   *
   * @param lockFile {@code <plugins>/<driver>/serialize.lock}, as upstream's helper locks
   */
  public DeviceDriver(
      PreparePlanner planner,
      ClaimReader reader,
      Supplier<Inventory> inventory,
      CdiSpecStore cdi,
      CheckpointStore checkpoint,
      ClaimTelemetry telemetry,
      Clock clock,
      int concurrency,
      PrepareInterlude interlude,
      Path lockFile) {
    this.interlude = interlude;
    this.planner = planner;
    this.reader = reader;
    this.inventory = inventory;
    this.cdi = cdi;
    this.checkpoint = checkpoint;
    this.journal = SetupJournal.beside(checkpoint.file(), checkpoint.files());
    this.intents =
        new SetupIntents(journal, checkpoint, inventory, planner.setup(), this::lastUser);
    this.telemetry = telemetry;
    this.clock = clock;
    AtomicInteger n = new AtomicInteger();
    this.pool =
        Executors.newFixedThreadPool(
            Math.max(1, concurrency),
            r -> {
              Thread t = new Thread(r, "claim-worker-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new ReentrantLock();
    }
    this.recovery = new NodeStateRecovery(planner, inventory, cdi, checkpoint);
    this.shared = new SharedStateLock(lockFile);
    shared.onAcquired(recovery::reloadCheckpoint);
  }

  /** Holds the node's state against the other driver process, if there is one. */
  private SharedStateLock.Held holdShared() {
    try {
      return shared.hold();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Makes the CDI specs match the checkpoint after a restart (or rebuilds a damaged checkpoint from
   * them), settles the setup intents a previous process left and restores the device setups ({@code
   * NodeStateRecovery}). Called once at startup, before the kubelet can reach the driver.
   *
   * @return how many claims the checkpoint holds
   */
  public int restore() {
    // the other pod of a rolling update may be half-way through a prepare: its spec without its
    // checkpoint entry yet, its setup intent pending
    try (SharedStateLock.Held held = holdShared()) {
      recovery.matchSpecsToCheckpoint();
      settleSetupIntents();
      recovery.restoreSetups();
      return checkpoint.all().size();
    }
  }

  /**
   * Settles the setup intents a previous process left ({@link SetupIntents}). Runs at start and
   * periodically; never alongside a prepare or unprepare of the same claim.
   *
   * @return how many intents remain unsettled
   */
  public int settleSetupIntents() {
    // an intent of the other driver process's prepare in flight must not be settled under it
    try (SharedStateLock.Held held = holdShared()) {
      return intents.settle(
          uid -> {
            ReentrantLock lock = lock(uid);
            lock.lock();
            lockSetup();
            return () -> {
              unlockSetup();
              lock.unlock();
            };
          });
    }
  }

  /** The prepared claims (the checkpoint, as the last process to change it left it), by UID. */
  public Map<String, PreparedClaim> prepared() {
    try (SharedStateLock.Held held = holdShared()) {
      return checkpoint.all();
    }
  }

  @Override
  public Map<String, PrepareResult> prepareResourceClaims(List<ClaimRef> claims) {
    return runAll(claims, this::prepare);
  }

  @Override
  public Map<String, String> unprepareResourceClaims(List<ClaimRef> claims) {
    return runAll(claims, this::unprepare);
  }

  @Override
  public void handleError(String message, Throwable cause) {
    // Nothing here is fatal: a refused registration shows in readiness, socket errors are
    // retried by the kubelet. Log once with the cause.
    LOG.error(message, cause);
  }

  private <T> Map<String, T> runAll(List<ClaimRef> claims, Function<ClaimRef, T> op) {
    // One task per distinct UID: the kubelet never repeats one in a call, but if it did, both
    // entries would get the same answer instead of racing.
    Map<String, ClaimRef> distinct = new LinkedHashMap<>();
    claims.forEach(c -> distinct.putIfAbsent(c.uid(), c));
    Map<String, Future<T>> futures = new LinkedHashMap<>();
    distinct.forEach((uid, c) -> futures.put(uid, pool.submit(() -> op.apply(c))));
    Map<String, T> results = new LinkedHashMap<>();
    futures.forEach((uid, f) -> results.put(uid, await(f)));
    return results;
  }

  private static <T> T await(Future<T> f) {
    try {
      return f.get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("claim task failed", e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for a claim", e);
    }
  }

  private PrepareResult prepare(ClaimRef ref) {
    long start = nanos();
    String traceParent = "";
    PrepareResult result;
    SharedStateLock.Held held;
    try {
      held = shared.hold();
    } catch (IOException e) {
      result = PrepareResult.failed("preparing claim " + ref + ": " + e.getMessage());
      LOG.warnf("prepare %s: %s", ref, result.error());
      telemetry.record(Operation.PREPARE, ref, traceParent, start, nanos(), result.error());
      return result;
    }
    ReentrantLock lock = lock(ref.uid());
    lock.lock();
    try {
      Optional<PreparedClaim> known = checkpoint.get(ref.uid());
      // an entry rebuilt from a spec lacks the request names: the claim is planned again, over
      // the setup its pod already uses (setups find before they create)
      boolean recovered = known.isPresent() && known.get().recovered();
      if (known.isPresent() && !recovered) {
        traceParent = known.get().traceParent();
        cdi.ensure(known.get());
        result = PrepareResult.ok(known.get().devices());
      } else {
        String invalid = invalid(ref);
        if (invalid != null) {
          result = PrepareResult.failed(invalid);
        } else {
          Optional<ResourceClaim> claim = reader.read(ref.namespace(), ref.name());
          if (claim.isEmpty()) {
            result =
                PrepareResult.failed(
                    "resourceclaim " + ref.namespace() + "/" + ref.name() + " not found");
          } else {
            Optional<String> conflict = reserve(ref, claim.get());
            if (conflict.isPresent()) {
              throw new DeviceTaken(conflict.get());
            }
            lockSetup();
            SetupsDone setups =
                new SetupsDone(planner.setup(), () -> checkpoint.all().values(), journal);
            try {
              PreparePlanner.Planned plan =
                  planner.planned(ref, claim.get(), inventory.get(), setups);
              PreparedClaim planned = plan.claim();
              traceParent = planned.traceParent();
              // the files first: the spec mounts them
              writeMetadata(plan.metadata());
              cdi.ensure(planned);
              interlude.afterCdiSpec(ref);
              checkpoint.put(planned);
              // a stale intent is harmless: the next start finds the claim checkpointed
              intents.forget(ref.uid());
              result = PrepareResult.ok(planned.devices());
            } catch (Exception e) {
              // a recovered claim's setup predates this call, and is in use; an intent whose undo
              // failed stays, to be released at the next start
              if (recovered || undo(ref, setups)) {
                intents.forget(ref.uid());
              }
              if (!recovered) {
                removeFilesOfUnprepared(ref);
              }
              throw e;
            } finally {
              unlockSetup();
              reservations.release(ref.uid());
            }
          }
        }
      }
    } catch (DeviceTaken e) {
      result = PrepareResult.failed("claim " + ref + ": " + e.getMessage());
    } catch (PrepareException e) {
      result = PrepareResult.failed("claim " + ref + ": " + e.getMessage());
    } catch (ClaimReader.ClaimReadException e) {
      result = PrepareResult.failed(e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      result = PrepareResult.failed("preparing claim " + ref + " was interrupted");
    } catch (IOException | RuntimeException e) {
      LOG.errorf(e, "preparing %s failed", ref);
      result = PrepareResult.failed("preparing claim " + ref + " failed: " + e);
    } finally {
      lock.unlock();
      held.close();
    }
    if (result.failed()) {
      LOG.warnf("prepare %s: %s", ref, result.error());
    }
    telemetry.record(Operation.PREPARE, ref, traceParent, start, nanos(), result.error());
    return result;
  }

  private String unprepare(ClaimRef ref) {
    long start = nanos();
    String traceParent = "";
    String error = "";
    SharedStateLock.Held held;
    try {
      held = shared.hold();
    } catch (IOException e) {
      error = "unpreparing claim " + ref + ": " + e.getMessage();
      telemetry.record(Operation.UNPREPARE, ref, traceParent, start, nanos(), error);
      return error;
    }
    ReentrantLock lock = lock(ref.uid());
    lock.lock();
    try {
      if (ref.uid().isEmpty()) {
        error = "claims[].uid: must not be empty";
      } else {
        // Read under the claim's lock: no prepare of this UID can add an entry meanwhile. A claim
        // whose devices need no setup leaves the setup lock alone, so a setup command that hangs
        // (until its timeout) holds up only the claims it concerns.
        Optional<PreparedClaim> known = checkpoint.get(ref.uid());
        traceParent = known.map(PreparedClaim::traceParent).orElse("");
        boolean setup = known.isPresent() && needsSetup(known.get());
        if (setup) {
          lockSetup();
        }
        try {
          // Released before the entry is removed: if it fails, the kubelet's retry finds the
          // entry and releases again.
          if (setup) {
            release(known.get());
          }
          cdi.delete(planner.names().specFileName(ref.uid()));
          deleteMetadata(ref);
          checkpoint.remove(ref.uid());
        } finally {
          if (setup) {
            unlockSetup();
          }
        }
      }
    } catch (PrepareException e) {
      error = "unpreparing claim " + ref + ": " + e.getMessage();
    } catch (IOException | RuntimeException e) {
      LOG.errorf(e, "unpreparing %s failed", ref);
      error = "unpreparing claim " + ref + " failed: " + e;
    } finally {
      lock.unlock();
      held.close();
    }
    telemetry.record(Operation.UNPREPARE, ref, traceParent, start, nanos(), error);
    return error;
  }

  /** The claim's devices, reserved against every other claim's ({@link DeviceFence}). */
  private Optional<String> reserve(ClaimRef ref, ResourceClaim claim) {
    DeviceFence.Holder wants =
        new DeviceFence.Holder(ref, DeviceFence.taken(claim, planner.driver(), planner.pool()));
    return reservations
        .reserve(wants, () -> checkpoint.all().values(), inventory.get())
        .map(
            why ->
                why
                    + "; the kubelet's retry prepares this claim once that one is unprepared (its"
                    + " pod was deleted, or is being deleted)");
  }

  /** A device the claim needs is still another claim's: nothing was touched. */
  private static final class DeviceTaken extends Exception {
    DeviceTaken(String message) {
      super(message, null, false, false);
    }
  }

  private void writeMetadata(List<DeviceMetadata.File> files) throws IOException {
    for (DeviceMetadata.File f : files) {
      Path file = planner.metadataDir().resolve(f.hostPath());
      try {
        checkpoint.files().write(file, f.content(), false);
      } catch (IOException e) {
        throw new FileWriteException("device-metadata file", file, e);
      }
    }
  }

  /**
   * After a prepare of a claim the checkpoint does not hold failed (a full disk: the checkpoint
   * write after the spec's): removes its spec and metadata files, which would otherwise tell the
   * container runtime, and a start that finds the checkpoint damaged, that the claim is prepared.
   * Deleting needs no space; a failure is logged, and the next start removes the spec.
   */
  private void removeFilesOfUnprepared(ClaimRef ref) {
    try {
      cdi.delete(planner.names().specFileName(ref.uid()));
      deleteMetadata(ref);
    } catch (IOException | RuntimeException e) {
      LOG.warnf("prepare %s failed, and removing its files failed too: %s", ref, e.getMessage());
    }
  }

  /** Removes the claim's device-metadata directory (a claim rebuilt from its spec has no name). */
  private void deleteMetadata(ClaimRef ref) throws IOException {
    if (planner.metadataDir() == null || ref.namespace().isEmpty() || ref.name().isEmpty()) {
      return;
    }
    Path dir = planner.metadataDir().resolve(DeviceMetadata.claimDir(ref.namespace(), ref.name()));
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /**
   * After a prepare failed part-way (the claim is not in the checkpoint): releases what its setup
   * began, so that the kubelet's retry, or the claim's deletion, finds nothing left running. A
   * device another prepared claim uses is released as not its last user.
   *
   * @return whether every release succeeded (else the claim's setup intent stays, for the next
   *     start to release)
   */
  private boolean undo(ClaimRef ref, SetupsDone setups) {
    boolean undone = true;
    for (NodeDevice device : setups.begun()) {
      boolean lastUser = lastUser(ref.uid(), device.name());
      try {
        setups.release(device, lastUser);
      } catch (PrepareException | RuntimeException e) {
        undone = false;
        LOG.warnf(
            "prepare %s failed, and undoing the setup of %s failed too: %s",
            ref, device.name(), e.getMessage());
      }
    }
    return undone;
  }

  /**
   * Undoes the device setup of a claim's devices; "last user" excludes the claim itself. Devices
   * the claim got with adminAccess were not set up for it, so they are not released.
   */
  private void release(PreparedClaim claim) throws PrepareException {
    if (planner.setup() == DeviceSetup.NONE) {
      return;
    }
    Set<String> released = new HashSet<>();
    Inventory now = inventory.get();
    for (var device : claim.devices()) {
      String name = device.deviceName();
      if (!released.add(name) || !claim.usesSetupOf(name)) {
        continue;
      }
      boolean lastUser = lastUser(claim.claim().uid(), name);
      Optional<NodeDevice> known = now.device(name);
      if (known.isEmpty()) {
        LOG.warnf(
            "unprepare %s: device %s is no longer on this node; nothing to release",
            claim.claim(), name);
        continue;
      }
      planner.setup().release(known.get(), lastUser);
    }
  }

  /** Whether releasing the claim may touch a device's setup, as {@link DeviceSetup#involves}. */
  private boolean needsSetup(PreparedClaim claim) {
    if (planner.setup() == DeviceSetup.NONE) {
      return false;
    }
    Inventory now = inventory.get();
    return claim.devices().stream()
        .map(d -> d.deviceName())
        .filter(claim::usesSetupOf)
        .anyMatch(name -> now.device(name).map(planner.setup()::involves).orElse(false));
  }

  /**
   * Whether no prepared claim other than {@code uid} uses the setup of the device (adminAccess
   * holders do not: nothing was set up for them).
   */
  private boolean lastUser(String uid, String device) {
    return checkpoint.all().values().stream()
        .filter(other -> !other.claim().uid().equals(uid))
        .noneMatch(other -> other.usesSetupOf(device));
  }

  private void lockSetup() {
    if (planner.setup() != DeviceSetup.NONE) {
      setupLock.lock();
    }
  }

  private void unlockSetup() {
    if (planner.setup() != DeviceSetup.NONE) {
      setupLock.unlock();
    }
  }

  private static String invalid(ClaimRef ref) {
    List<String> missing = new ArrayList<>();
    if (ref.uid().isEmpty()) {
      missing.add("claims[].uid");
    }
    if (ref.namespace().isEmpty()) {
      missing.add("claims[].namespace");
    }
    if (ref.name().isEmpty()) {
      missing.add("claims[].name");
    }
    return missing.isEmpty() ? null : String.join(", ", missing) + ": must not be empty";
  }

  private ReentrantLock lock(String uid) {
    return locks[Math.floorMod(uid.hashCode(), STRIPES)];
  }

  private long nanos() {
    Instant now = clock.instant();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** Stops the worker pool; calls in flight finish. */
  @Override
  public void close() {
    pool.shutdown();
  }
}
