package io.kdra.devicedriver.prepare;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Semaphore;

/**
 * Serialises the driver's work on the node's shared state (checkpoint, CDI specs, setup intents,
 * device setup) across driver processes, with an exclusive lock on a file ({@code
 * <plugins>/<driver>/serialize.lock}, as upstream's kubeletplugin helper takes for a rolling
 * update): while an old and a new driver pod overlap, the kubelet may call either.
 *
 * <p>Within one process the lock is shared: the first holder takes the file lock, later holders
 * join it, the last one out releases it. So claims still run concurrently inside a process, and a
 * process that gets the lock finds nothing of the other's in flight. Whoever takes the file lock
 * runs {@code onAcquired} first (the driver re-reads the shared state from disk), since the other
 * process may have changed it meanwhile. A process that keeps the lock busy makes the other wait
 * until its calls pause; the kubelet sends new calls to the newest instance only, so the old one's
 * wait ends with the new one's burst.
 *
 * <p>A JVM refuses a second lock on a file it already locks ({@code OverlappingFileLockException}),
 * so holders of one file in one JVM (two drivers in one test) also queue on a JVM-wide semaphore
 * per file. Thread-safe.
 */
final class SharedStateLock {
  private static final ConcurrentMap<Path, Semaphore> IN_THIS_JVM = new ConcurrentHashMap<>();

  /** What runs when this process takes the file lock, before any holder proceeds. */
  @FunctionalInterface
  interface OnAcquired {
    void run() throws IOException;
  }

  /** A hold; closing it lets the lock go once no other holder of this process remains. */
  interface Held extends AutoCloseable {
    @Override
    void close();
  }

  private final Path file;
  private final Semaphore jvm;
  private OnAcquired onAcquired = () -> {};
  private int holders; // guarded by this
  private FileChannel channel; // guarded by this
  private FileLock lock; // guarded by this

  SharedStateLock(Path file) {
    this.file = file.toAbsolutePath().normalize();
    this.jvm = IN_THIS_JVM.computeIfAbsent(this.file, f -> new Semaphore(1, true));
  }

  Path file() {
    return file;
  }

  /** Sets what runs whenever this process takes the file lock. */
  synchronized void onAcquired(OnAcquired action) {
    this.onAcquired = action;
  }

  /**
   * Holds the lock, waiting for the other process to release it if it has it.
   *
   * @throws IOException when the lock file cannot be created or locked, or {@code onAcquired}
   *     failed (then nothing is held)
   */
  synchronized Held hold() throws IOException {
    if (holders == 0) {
      // blocks this process's other holders too: they would have to wait for the file anyway
      acquire();
      try {
        onAcquired.run();
      } catch (IOException | RuntimeException e) {
        release();
        throw e;
      }
    }
    holders++;
    return new Held() {
      private boolean closed;

      @Override
      public void close() {
        synchronized (SharedStateLock.this) {
          if (!closed) {
            closed = true;
            exit();
          }
        }
      }
    };
  }

  private void exit() {
    if (--holders == 0) {
      release();
    }
  }

  private void acquire() throws IOException {
    try {
      jvm.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for " + file, e);
    }
    try {
      Files.createDirectories(file.getParent());
      channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      lock = channel.lock();
    } catch (IOException | RuntimeException e) {
      release();
      throw new IOException("cannot lock " + file + ": " + e.getMessage(), e);
    }
  }

  private void release() {
    try {
      if (lock != null && lock.isValid()) {
        lock.release();
      }
    } catch (IOException ignored) {
      // closing the channel releases it anyway
    }
    try {
      if (channel != null) {
        channel.close();
      }
    } catch (IOException ignored) {
      // nothing held any more
    }
    lock = null;
    channel = null;
    jvm.release();
  }
}
