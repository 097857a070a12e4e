package io.kdra.it.support;

import static org.awaitility.Awaitility.await;

import java.time.Duration;

/** Waits on a process just started, for tests that read it through {@link ProcessHandle}. */
public final class ProcessStart {

  private ProcessStart() {}

  /**
   * Waits until the child has exec'd its program or ended: until then its command line is the
   * forking JVM's ({@code .../java}), and nothing that reads the command line recognises it.
   *
   * @return {@code process}
   */
  public static Process awaitExec(Process process) {
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(10))
        .until(
            () ->
                !process.isAlive()
                    || process.info().command().map(c -> !c.endsWith("/java")).orElse(false));
    return process;
  }
}
