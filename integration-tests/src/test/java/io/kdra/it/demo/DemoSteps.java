package io.kdra.it.demo;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.it.support.ServiceProcess;
import java.util.function.BooleanSupplier;

/**
 * The demo's progress lines ({@code [demo] 12.3s what}, seconds since it started) and its waits,
 * each of which fails naming what it waited for and where the logs are.
 */
final class DemoSteps {

  private final long t0 = System.nanoTime();

  void step(String what) {
    System.out.printf("[demo] %6.1fs %s%n", (System.nanoTime() - t0) / 1e9, what);
  }

  /**
   * Polls {@code condition} every 250 ms until it holds, for at most {@code timeoutMs}. A request
   * that fails (an API server too loaded to answer within the client's timeout) counts as not yet;
   * the last such failure is named if the wait runs out.
   */
  void await(String what, long timeoutMs, String logs, BooleanSupplier condition) {
    long deadline = System.currentTimeMillis() + timeoutMs;
    KubernetesClientException last = null;
    while (true) {
      try {
        if (condition.getAsBoolean()) {
          return;
        }
      } catch (KubernetesClientException e) {
        last = e;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException(
            "timed out waiting for "
                + what
                + (last == null ? "" : " (last request failed: " + last.getMessage() + ")")
                + "; "
                + logs);
      }
      ServiceProcess.sleep(250);
    }
  }
}
