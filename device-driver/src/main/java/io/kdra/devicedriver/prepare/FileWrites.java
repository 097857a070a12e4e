package io.kdra.devicedriver.prepare;

import java.io.IOException;
import java.nio.file.Path;

/**
 * How the driver replaces and removes its files on the node (CDI specs, the checkpoint, setup
 * intents, device-metadata files): {@link #ATOMIC} on the real disk. The seam where tests put a
 * full disk ({@code ENOSPC}) in between.
 */
public interface FileWrites {

  /** {@link AtomicFiles}: a reader sees the old content or the new, never a torn file. */
  FileWrites ATOMIC =
      new FileWrites() {
        @Override
        public void write(Path target, String content, boolean durable) throws IOException {
          AtomicFiles.write(target, content, durable);
        }

        @Override
        public boolean delete(Path target, boolean durable) throws IOException {
          return AtomicFiles.delete(target, durable);
        }
      };

  /** Replaces {@code target} with {@code content} (UTF-8), creating parent directories. */
  void write(Path target, String content, boolean durable) throws IOException;

  /** Deletes {@code target} if present; true if it existed. */
  boolean delete(Path target, boolean durable) throws IOException;
}
