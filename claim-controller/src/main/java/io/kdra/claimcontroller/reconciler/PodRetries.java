package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.OperatorException;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.EventHandler;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The pod scheduler's delayed retries, each owned by one pod (its UID). The operator SDK's own
 * retry timer is keyed by namespace/name and cancelled whenever a reconcile of that name ends: when
 * a pod is deleted while its reconcile runs and a pod of the same name is created meanwhile (a
 * StatefulSet's pod), the old reconcile's late end cancels the new pod's pending retry, which then
 * waits for an unrelated event. Here a retry is replaced only by a later one of the same pod, and
 * fires only while that pod exists. Thread-safe.
 */
final class PodRetries extends AbstractEventSource<Void, Pod> {

  private final Function<ResourceID, Optional<Pod>> pods;
  private final Map<String, Retry> pending = new ConcurrentHashMap<>();
  private volatile ScheduledThreadPoolExecutor timer;

  /**
   * @param pods the pod cache: a retry fires only if the pod under its name still has its UID
   */
  PodRetries(Function<ResourceID, Optional<Pod>> pods) {
    super(Void.class, "pod-retries");
    this.pods = pods;
  }

  /**
   * Retries {@code pod} after {@code delay}, in place of any retry of it still pending; nothing
   * while stopped (the operator is shutting down).
   */
  void after(Pod pod, Duration delay) {
    ScheduledThreadPoolExecutor t = timer;
    if (t == null) {
      return;
    }
    Retry retry = new Retry(pod.getMetadata().getUid(), ResourceID.fromResource(pod));
    Retry replaced = pending.put(retry.uid, retry);
    if (replaced != null) {
      replaced.cancel();
    }
    retry.future = t.schedule(retry, delay.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Drops the retry of {@code pod}, if any: it is placed, done or no longer this scheduler's. */
  void forget(Pod pod) {
    Retry r = pending.remove(pod.getMetadata().getUid());
    if (r != null) {
      r.cancel();
    }
  }

  /** Whether a retry of the pod with this UID is pending. */
  boolean pendingFor(String uid) {
    return pending.containsKey(uid);
  }

  @Override
  public void start() throws OperatorException {
    ScheduledThreadPoolExecutor t =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread thread = new Thread(r, "pod-retries");
              thread.setDaemon(true);
              return thread;
            });
    t.setRemoveOnCancelPolicy(true);
    timer = t;
    super.start();
  }

  @Override
  public void stop() throws OperatorException {
    ScheduledThreadPoolExecutor t = timer;
    timer = null;
    if (t != null) {
      t.shutdownNow();
    }
    pending.clear();
    super.stop();
  }

  @Override
  public Set<Void> getSecondaryResources(Pod primary) {
    return Set.of();
  }

  private final class Retry implements Runnable {
    private final String uid;
    private final ResourceID id;
    private volatile ScheduledFuture<?> future;

    private Retry(String uid, ResourceID id) {
      this.uid = uid;
      this.id = id;
    }

    @Override
    public void run() {
      EventHandler handler = getEventHandler();
      if (!pending.remove(uid, this) || handler == null) {
        return;
      }
      if (pods.apply(id).map(p -> uid.equals(p.getMetadata().getUid())).orElse(false)) {
        handler.handleEvent(new Event(id));
      }
    }

    private void cancel() {
      ScheduledFuture<?> f = future;
      if (f != null) {
        f.cancel(false);
      }
    }
  }
}
