package io.kdra.devicedriver.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A Secret's volume as the kubelet writes it (its AtomicWriter): each version of the files in a
 * hidden directory of its own, {@code ..data} a symlink to the current one, swapped by a rename,
 * and each file a symlink through {@code ..data}; the previous version's directory removed.
 */
public final class SecretVolume {

  private static final AtomicInteger VERSION = new AtomicInteger();

  private final Path dir;

  public SecretVolume(Path dir) {
    this.dir = dir;
  }

  /** The path a container reads {@code key} at. */
  public Path file(String key) {
    return dir.resolve(key);
  }

  /** Publishes a new version of the files, as the kubelet does when the Secret changed. */
  public void update(Map<String, byte[]> files) {
    update(files, null);
  }

  /**
   * Publishes a new version whose files carry {@code modified} (null: now): the swap must be seen
   * also where the new files' times equal the old ones' (a coarse clock, a copy keeping times).
   */
  public void update(Map<String, byte[]> files, FileTime modified) {
    try {
      Files.createDirectories(dir);
      Path data = dir.resolve("..data");
      Path previous = Files.isSymbolicLink(data) ? dir.resolve(Files.readSymbolicLink(data)) : null;
      Path version = dir.resolve("..version_" + VERSION.incrementAndGet());
      Files.createDirectory(version);
      for (Map.Entry<String, byte[]> f : files.entrySet()) {
        Path written = Files.write(version.resolve(f.getKey()), f.getValue());
        if (modified != null) {
          Files.setLastModifiedTime(written, modified);
        }
      }
      Path next = dir.resolve("..data_tmp");
      Files.deleteIfExists(next);
      Files.createSymbolicLink(next, version.getFileName());
      Files.move(next, data, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      for (String key : files.keySet()) {
        Path link = dir.resolve(key);
        if (!Files.isSymbolicLink(link)) {
          Files.createSymbolicLink(link, Path.of("..data", key));
        }
      }
      if (previous != null) {
        try (Stream<Path> old = Files.walk(previous)) {
          old.sorted(Comparator.reverseOrder()).forEach(SecretVolume::delete);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void delete(Path p) {
    try {
      Files.delete(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
