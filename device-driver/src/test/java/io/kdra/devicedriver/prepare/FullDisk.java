package io.kdra.devicedriver.prepare;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A node's disks that fill up: a write under a full directory fails as the kernel's {@code ENOSPC}
 * reaches Java (an {@link IOException} "No space left on device", the target untouched, as {@link
 * AtomicFiles} leaves it); deletes still work, as they do on a full disk.
 */
final class FullDisk implements FileWrites {
  static final String ENOSPC = "No space left on device";

  private final Set<Path> full = ConcurrentHashMap.newKeySet();

  /** Every later write under {@code dir} fails until {@link #free}. */
  void fill(Path dir) {
    full.add(dir.toAbsolutePath());
  }

  void free() {
    full.clear();
  }

  @Override
  public void write(Path target, String content, boolean durable) throws IOException {
    Path t = target.toAbsolutePath();
    if (full.stream().anyMatch(t::startsWith)) {
      throw new IOException(ENOSPC);
    }
    FileWrites.ATOMIC.write(target, content, durable);
  }

  @Override
  public boolean delete(Path target, boolean durable) throws IOException {
    return FileWrites.ATOMIC.delete(target, durable);
  }
}
