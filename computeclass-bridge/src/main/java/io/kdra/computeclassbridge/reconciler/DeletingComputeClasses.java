package io.kdra.computeclassbridge.reconciler;

import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kdra.computeclassbridge.model.ComputeClass;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * Cleans up the ComputeClasses being deleted that still carry the bridge's finalizer. The operator
 * SDK dispatches a ComputeClass marked for deletion only to a reconciler that is a {@code Cleaner},
 * and for such a reconciler it adds the finalizer itself, before calling it, on every replica: a
 * standby wrote it (every replica runs the SDK's event processing: {@code OperatorSdkElection}).
 * JOSDK's {@code triggerReconcilerOnAllEvents} would hand deletions to the reconciler without that,
 * but quarkus-operator-sdk 7.7 does not pass the setting on to the running controller. So the
 * reconciler adds the finalizer itself, while leading, and this sweep over the informer's cache
 * removes what a deleted class generated, then the finalizer: on the leader only, with every
 * informer listed, one class at a time, each after any reconcile of it that is running ({@code
 * ComputeClassLocks}). A cleanup that failed is tried again at the next sweep.
 */
final class DeletingComputeClasses implements AutoCloseable {

  /** How long a ComputeClass marked for deletion waits for its cleanup at most. */
  static final Duration SWEEP_INTERVAL = Duration.ofSeconds(1);

  private static final Logger LOG = Logger.getLogger(DeletingComputeClasses.class);

  private final IndexerResourceCache<ComputeClass> classes;
  private final Consumer<ComputeClass> cleanup;
  private final BooleanSupplier mayWrite;
  private final ScheduledExecutorService worker =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "deleting-computeclasses");
            t.setDaemon(true);
            return t;
          });

  private DeletingComputeClasses(
      IndexerResourceCache<ComputeClass> classes,
      Consumer<ComputeClass> cleanup,
      BooleanSupplier mayWrite) {
    this.classes = classes;
    this.cleanup = cleanup;
    this.mayWrite = mayWrite;
  }

  /**
   * Sweeps {@code classes} every {@code interval} while {@code mayWrite} (this replica leads and
   * its informers have listed), handing each class being deleted that still has {@code finalizer}
   * to {@code cleanup}.
   */
  static DeletingComputeClasses start(
      IndexerResourceCache<ComputeClass> classes,
      String finalizer,
      Consumer<ComputeClass> cleanup,
      BooleanSupplier mayWrite,
      Duration interval) {
    DeletingComputeClasses d =
        new DeletingComputeClasses(
            classes,
            cc -> {
              if (cc.isMarkedForDeletion() && cc.hasFinalizer(finalizer)) {
                cleanup.accept(cc);
              }
            },
            mayWrite);
    d.worker.scheduleWithFixedDelay(
        d::sweep, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    return d;
  }

  void sweep() {
    if (!mayWrite.getAsBoolean()) {
      return;
    }
    classes
        .list(ComputeClass::isMarkedForDeletion)
        .forEach(
            cc -> {
              try {
                cleanup.accept(cc);
              } catch (RuntimeException e) {
                // a conflict on a shared DeviceClass, an unreachable API server: the next sweep
                LOG.infof(
                    "ComputeClass %s is being deleted; its cleanup failed, retrying within %s: %s",
                    cc.getMetadata().getName(), SWEEP_INTERVAL, e.getMessage());
              }
            });
  }

  @Override
  public void close() {
    worker.shutdownNow();
  }
}
