package io.kdra.it.services;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.support.ServiceProcess;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Pods that keep arriving while a test brings a fault about: a thread that creates {@code pods}
 * pods of one template, {@code prefix-000}, {@code prefix-001}, ..., one every {@code pace}. A
 * creation that fails ends the arrivals, so the test sees fewer pods created than asked.
 */
public final class PodArrivals {

  private final AtomicInteger created;
  private final Thread thread;

  private PodArrivals(AtomicInteger created, Thread thread) {
    this.created = created;
    this.thread = thread;
  }

  /** Starts creating pods of {@code template} in {@code namespace}. */
  public static PodArrivals start(
      KubernetesClient client,
      String namespace,
      String template,
      String prefix,
      int pods,
      Duration pace) {
    AtomicInteger created = new AtomicInteger();
    Thread thread =
        new Thread(
            () -> {
              for (int i = 0; i < pods; i++) {
                client
                    .resource(
                        Dra.podWithTemplate(
                            namespace, String.format(prefix + "-%03d", i), template))
                    .create();
                created.incrementAndGet();
                ServiceProcess.sleep(pace.toMillis());
              }
            },
            "pod-arrivals");
    thread.start();
    return new PodArrivals(created, thread);
  }

  /** Waits at most {@code atMost} for the arrivals to end; returns how many pods were created. */
  public int awaitEnd(Duration atMost) throws InterruptedException {
    thread.join(atMost.toMillis());
    return created.get();
  }
}
