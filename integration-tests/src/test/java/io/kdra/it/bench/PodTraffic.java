package io.kdra.it.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kdra.it.support.ServiceProcess;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The benchmark's pods of {@link BenchWorkload#NAMESPACE} in flight: creates them in batches on
 * {@code creators} threads, deletes them, and keeps by pod name when each create was sent and when
 * an informer first saw the pod bound. Names are never reused within a run, so the times of one
 * batch are never another's.
 */
final class PodTraffic implements AutoCloseable {

  private final KubernetesClient client;
  private final int creators;
  private final Consumer<String> log;
  private final Map<String, Long> sentAt = new ConcurrentHashMap<>();
  private final Map<String, Long> boundAt = new ConcurrentHashMap<>();
  private final SharedIndexInformer<Pod> informer;

  PodTraffic(KubernetesClient client, int creators, Consumer<String> log) {
    this.client = client;
    this.creators = creators;
    this.log = log;
    this.informer =
        client
            .pods()
            .inNamespace(BenchWorkload.NAMESPACE)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Pod pod) {
                    seen(pod);
                  }

                  @Override
                  public void onUpdate(Pod old, Pod pod) {
                    seen(pod);
                  }

                  @Override
                  public void onDelete(Pod pod, boolean unknown) {}
                });
  }

  private void seen(Pod pod) {
    if (pod.getSpec().getNodeName() != null) {
      boundAt.putIfAbsent(pod.getMetadata().getName(), System.nanoTime());
    }
  }

  /** Creates sent together; {@link #sent} once every create has been answered. */
  static final class Batch {
    final List<String> names;
    final long start = System.nanoTime();
    final AtomicInteger failures = new AtomicInteger();
    final AtomicLong lastSent = new AtomicLong(start);
    private final ExecutorService pool;

    private Batch(List<String> names, ExecutorService pool) {
      this.names = names;
      this.pool = pool;
    }

    boolean sent() {
      return pool.isTerminated();
    }

    /** Seconds from the first create sent to the last answered. */
    double sendSeconds() {
      return (lastSent.get() - start) / 1e9;
    }
  }

  /** Starts creating {@code pods} on the creator threads; returns at once. */
  Batch create(List<Pod> pods) {
    ExecutorService pool = Executors.newFixedThreadPool(creators);
    Batch batch = new Batch(pods.stream().map(p -> p.getMetadata().getName()).toList(), pool);
    for (Pod pod : pods) {
      pool.submit(
          () -> {
            sentAt.put(pod.getMetadata().getName(), System.nanoTime());
            try {
              client.resource(pod).create();
            } catch (KubernetesClientException e) {
              batch.failures.incrementAndGet();
              log.accept("creating " + pod.getMetadata().getName() + ": " + e.getMessage());
            }
            batch.lastSent.accumulateAndGet(System.nanoTime(), Math::max);
          });
    }
    pool.shutdown();
    return batch;
  }

  /**
   * Null once every pod of {@code batch} is bound; else why waiting stopped: {@code deadline}
   * ({@link System#nanoTime}) passed, or none was bound for {@code stallSeconds} after all creates
   * were answered.
   */
  String awaitBound(Batch batch, long deadline, int deadlineSeconds, int stallSeconds) {
    long stall = TimeUnit.SECONDS.toNanos(stallSeconds);
    int last = -1;
    long lastProgress = System.nanoTime();
    int bound;
    while ((bound = bound(batch.names)) < batch.names.size()) {
      long now = System.nanoTime();
      if (bound != last) {
        last = bound;
        lastProgress = now;
      }
      int left = batch.names.size() - bound;
      if (now - deadline > 0) {
        return left + " pods not bound within the deadline of " + deadlineSeconds + " s";
      }
      if (now - lastProgress > stall && batch.sent()) {
        return left + " pods not bound: none bound for " + stallSeconds + " s";
      }
      ServiceProcess.sleep(100);
    }
    return null;
  }

  int bound(Collection<String> names) {
    int n = 0;
    for (String name : names) {
      if (boundAt.containsKey(name)) {
        n++;
      }
    }
    return n;
  }

  /** When the last of {@code names} was seen bound; {@code otherwise} when none was. */
  long lastBound(Collection<String> names, long otherwise) {
    return names.stream()
        .map(boundAt::get)
        .filter(t -> t != null)
        .mapToLong(Long::longValue)
        .max()
        .orElse(otherwise);
  }

  /** Milliseconds from create sent to binding seen of those of {@code names} that were bound. */
  List<Double> bindMs(Collection<String> names) {
    List<Double> ms = new ArrayList<>();
    for (String name : names) {
      Long bound = boundAt.get(name);
      Long sent = sentAt.get(name);
      if (bound != null && sent != null) {
        ms.add((bound - sent) / 1e6);
      }
    }
    return ms;
  }

  /**
   * Deletes the pods {@code names} on the creator threads, at once (no kubelet runs to end them
   * gracefully); returns when every delete is answered. A pod already gone is no failure.
   */
  void delete(Collection<String> names) {
    ExecutorService pool = Executors.newFixedThreadPool(creators);
    try {
      List<Future<?>> deletes = new ArrayList<>();
      for (String name : names) {
        deletes.add(
            pool.submit(
                () ->
                    client
                        .pods()
                        .inNamespace(BenchWorkload.NAMESPACE)
                        .withName(name)
                        .withGracePeriod(0)
                        .delete()));
      }
      for (Future<?> f : deletes) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("deleting pods: " + e.getCause(), e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  @Override
  public void close() {
    informer.close();
  }
}
