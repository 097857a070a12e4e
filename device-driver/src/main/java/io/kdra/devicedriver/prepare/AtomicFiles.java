package io.kdra.devicedriver.prepare;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Atomic file replacement: write a temp file in the same directory, rename it over the target. A
 * reader (the container runtime, a restarted driver) sees the old content or the new, never a torn
 * file. With {@code durable}, the temp file is fsync'ed before and the directory after the rename,
 * so the new content also survives a power loss; that costs two fsyncs, which dominate prepare
 * latency, so only the checkpoint (the source of truth) pays them.
 */
public final class AtomicFiles {
  private AtomicFiles() {}

  /** Replaces {@code target} with {@code content} (UTF-8) durably, creating parent directories. */
  public static void write(Path target, String content) throws IOException {
    write(target, content, true);
  }

  /** Replaces {@code target} with {@code content} (UTF-8), creating parent directories. */
  public static void write(Path target, String content, boolean durable) throws IOException {
    Path dir = target.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    // A unique temp name: concurrent writers of different targets share the directory.
    Path tmp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp");
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
        ByteBuffer buf = ByteBuffer.wrap(content.getBytes(StandardCharsets.UTF_8));
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
        if (durable) {
          ch.force(true);
        }
      }
      try {
        Files.move(
            tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        throw new IOException("cannot rename atomically in " + dir, e);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
    if (durable) {
      syncDirectory(dir);
    }
  }

  /** Deletes {@code target} if present; true if it existed. */
  public static boolean delete(Path target, boolean durable) throws IOException {
    boolean existed = Files.deleteIfExists(target);
    if (existed && durable) {
      syncDirectory(target.toAbsolutePath().getParent());
    }
    return existed;
  }

  private static void syncDirectory(Path dir) throws IOException {
    // Linux lets a directory be opened read-only and fsync'ed; that persists the rename.
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    }
  }
}
