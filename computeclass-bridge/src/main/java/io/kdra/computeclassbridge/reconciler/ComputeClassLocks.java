package io.kdra.computeclassbridge.reconciler;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Serialises the work on one ComputeClass done by two threads: the operator SDK's reconcile, which
 * applies its objects, and {@link DeletingComputeClasses}' sweep, which removes them and then the
 * finalizer. Without it a reconcile that had started before the class was marked for deletion could
 * write its objects again after the cleanup, with the class gone: a template left to the garbage
 * collector, a shared DeviceClass still labelled as used by the class. The SDK used to serialise
 * the two itself while it ran the cleanup ({@code Cleaner}).
 *
 * <p>Striped by name: a fixed set of locks, nothing kept per class. Two classes on one stripe wait
 * for each other briefly; nothing holds two stripes, so nothing deadlocks.
 */
final class ComputeClassLocks {

  private static final int STRIPES = 64;

  private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];

  ComputeClassLocks() {
    for (int i = 0; i < STRIPES; i++) {
      stripes[i] = new ReentrantLock();
    }
  }

  /** Runs {@code work} while no other work on the class {@code name} runs. */
  <T> T holding(String name, Supplier<T> work) {
    ReentrantLock lock = stripe(name);
    lock.lock();
    try {
      return work.get();
    } finally {
      lock.unlock();
    }
  }

  /** Whether some work on {@code name} (or a class on its stripe) waits for the lock. */
  boolean awaited(String name) {
    return stripe(name).hasQueuedThreads();
  }

  private ReentrantLock stripe(String name) {
    return stripes[Math.floorMod(name.hashCode(), STRIPES)];
  }
}
