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
 * Crash-safe file replacement: write a temp file in the same directory, fsync it, rename it over
 * the target, fsync the directory. A reader (the container runtime, a restarted driver) sees the
 * old content or the new, never a torn file, and after return the new content survives a power
 * loss.
 */
public final class AtomicFiles {
  private AtomicFiles() {}

  /** Replaces {@code target} with {@code content} (UTF-8), creating parent directories. */
  public static void write(Path target, String content) throws IOException {
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
        ch.force(true);
      }
      try {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        throw new IOException("cannot rename atomically in " + dir, e);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
    syncDirectory(dir);
  }

  /** Deletes {@code target} if present and makes the deletion durable; true if it existed. */
  public static boolean delete(Path target) throws IOException {
    boolean existed = Files.deleteIfExists(target);
    if (existed) {
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
