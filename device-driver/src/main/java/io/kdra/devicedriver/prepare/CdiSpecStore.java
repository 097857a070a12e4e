package io.kdra.devicedriver.prepare;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The CDI spec directory (usually {@code /var/run/cdi}): one file per prepared claim, written
 * atomically. Thread-safe for different claims; callers serialise per claim.
 *
 * <p>Spec files are written and removed without fsync: the checkpoint (durable) holds each spec's
 * exact content, and at startup, before the kubelet can reach the driver, {@link
 * DeviceDriver#restore()} rewrites every spec that is missing or differs and removes specs of
 * claims an intact checkpoint does not hold (a damaged one is rebuilt from the specs instead). So a
 * spec lost or left behind by a power cut is repaired before any container could use it, and
 * prepare saves two of its four fsyncs. ({@code /var/run/cdi} is usually tmpfs, where fsync does
 * nothing anyway.)
 */
public final class CdiSpecStore {
  private final Path dir;
  private final FileWrites files;

  public CdiSpecStore(Path dir) {
    this(dir, FileWrites.ATOMIC);
  }

  /** A store that writes through {@code files}. */
  public CdiSpecStore(Path dir, FileWrites files) {
    this.dir = dir;
    this.files = files;
  }

  public Path dir() {
    return dir;
  }

  /** Writes the claim's spec unless the file already has exactly this content. */
  public void ensure(PreparedClaim claim) throws IOException {
    Path file = dir.resolve(claim.cdiSpecFile());
    if (Files.isRegularFile(file)
        && Files.readString(file, StandardCharsets.UTF_8).equals(claim.cdiSpec())) {
      return;
    }
    try {
      files.write(file, claim.cdiSpec(), false);
    } catch (IOException e) {
      throw new FileWriteException("CDI spec", file, e);
    }
  }

  /** The content of a spec file, by name. */
  public String read(String fileName) throws IOException {
    return Files.readString(dir.resolve(fileName), StandardCharsets.UTF_8);
  }

  /** Removes a spec file by name; a missing file is fine (unprepare is idempotent). */
  public void delete(String fileName) throws IOException {
    files.delete(dir.resolve(fileName), false);
  }

  /** Names of the spec files in the directory that start with {@code prefix}. */
  public List<String> list(String prefix) throws IOException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString())
          .filter(n -> n.startsWith(prefix) && n.endsWith(".json"))
          .sorted()
          .toList();
    }
  }
}
