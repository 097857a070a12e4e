package io.kdra.devicedriver.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A fake host command that hangs as a stuck {@code nvidia-smi} does: a shell script that starts
 * {@code sleep 600} and waits for it, recording both process ids, so a test can check that a
 * timeout killed the whole tree. {@link #close()} kills whatever is left (a test that failed).
 */
public final class HungCommand implements AutoCloseable {
  private final Path script;
  private final Path pids;

  private HungCommand(Path script, Path pids) {
    this.script = script;
    this.pids = pids;
  }

  /** Writes the script into {@code dir}. */
  public static HungCommand in(Path dir) throws IOException {
    Path pids = dir.resolve("hung.pids");
    Path script = dir.resolve("hung-nvidia-smi");
    Files.writeString(
        script,
        "#!/bin/sh\necho hanging\nsleep 600 &\necho $$ $! > "
            + pids
            + ".tmp\nmv "
            + pids
            + ".tmp "
            + pids
            + "\nwait\n");
    assertThat(script.toFile().setExecutable(true)).isTrue();
    return new HungCommand(script, pids);
  }

  public String path() {
    return script.toString();
  }

  /** The shell's and the sleep's process ids, once the script has recorded them. */
  public List<Long> processIds() throws IOException {
    List<Long> out = new ArrayList<>();
    if (Files.exists(pids)) {
      for (String pid : Files.readString(pids).strip().split(" ")) {
        out.add(Long.parseLong(pid));
      }
    }
    return out;
  }

  /** Asserts that the script ran and that its processes end (waiting up to 10 s for that state). */
  public void assertAllGone() throws Exception {
    List<Long> started = processIds();
    assertThat(started).as("the script recorded its processes").hasSize(2);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    for (long pid : started) {
      Optional<ProcessHandle> h = ProcessHandle.of(pid);
      if (h.isPresent()) {
        long left = Math.max(0, deadline - System.nanoTime());
        try {
          h.get().onExit().get(left, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
          // asserted below
        }
      }
      assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive))
          .as("process %d of the hung command", pid)
          .isNotEqualTo(Optional.of(true));
    }
  }

  /**
   * A generous bound for "fails within the timeout": the timeout plus room for a loaded machine.
   */
  public static Duration bound(Duration timeout) {
    return timeout.plusSeconds(5);
  }

  @Override
  public void close() throws IOException {
    processIds().forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
  }
}
