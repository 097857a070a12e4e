package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One controller's primary informer lent to the other controller: its cache, its events, and
 * whether it has synced. The operator SDK gives each controller informers of its own, so the pods
 * (the pod-scheduling controller's primary) and the claims (the cleanup controller's) were each
 * watched and decoded twice, once more as the other controller's secondary source; shared, each
 * object is decoded once. Thread-safe.
 */
final class SharedInformer<T extends HasMetadata> {

  /** Receives every event of the informer, after its cache holds the change. */
  @FunctionalInterface
  interface Listener<T> {
    void onEvent(T resource, boolean deleted);
  }

  private final String kind;
  private volatile IndexerResourceCache<T> cache;
  private final List<Listener<T>> listeners = new CopyOnWriteArrayList<>();
  private final CountDownLatch synced = new CountDownLatch(1);

  SharedInformer(String kind) {
    this.kind = kind;
  }

  /** Called by the owning controller while it prepares its event sources. */
  void offer(IndexerResourceCache<T> primaryCache) {
    this.cache = primaryCache;
  }

  /**
   * The owner's cache.
   *
   * @throws IllegalStateException before the owning controller offered it
   */
  IndexerResourceCache<T> cache() {
    IndexerResourceCache<T> c = cache;
    if (c == null) {
      throw new IllegalStateException("the " + kind + " informer is not set up yet");
    }
    return c;
  }

  void subscribe(Listener<T> listener) {
    listeners.add(listener);
  }

  /** Called by the owning controller for each event of its primary informer. */
  void publish(T resource, boolean deleted) {
    for (Listener<T> l : listeners) {
      l.onEvent(resource, deleted);
    }
  }

  /** Called by the owning controller once its primary informer has synced. */
  void markSynced() {
    synced.countDown();
  }

  boolean isSynced() {
    return synced.getCount() == 0;
  }

  /** Waits until the owner's informer has synced; false when {@code timeout} passed first. */
  boolean awaitSynced(Duration timeout) throws InterruptedException {
    return synced.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  String kind() {
    return kind;
  }
}
