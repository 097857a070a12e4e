package io.kdra.devicedriver.prepare;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CDI spec directory (usually {@code /var/run/cdi}): one file per prepared claim, written
 * atomically. Thread-safe for different claims; callers serialise per claim.
 */
public final class CdiSpecStore {
  private final Path dir;

  public CdiSpecStore(Path dir) {
    this.dir = dir;
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
    AtomicFiles.write(file, claim.cdiSpec());
  }

  /** Removes a spec file by name; a missing file is fine (unprepare is idempotent). */
  public void delete(String fileName) throws IOException {
    AtomicFiles.delete(dir.resolve(fileName));
  }
}
