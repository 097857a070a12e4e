package io.kdra.it.demo;

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

  /** Polls {@code condition} every 250 ms until it holds, for at most {@code timeoutMs}. */
  void await(String what, long timeoutMs, String logs, BooleanSupplier condition) {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("timed out waiting for " + what + "; " + logs);
      }
      ServiceProcess.sleep(250);
    }
  }
}
