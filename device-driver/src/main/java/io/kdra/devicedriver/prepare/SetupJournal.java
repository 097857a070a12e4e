package io.kdra.devicedriver.prepare;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Durable intents of device setup: before a prepare touches a device's hardware (creates a MIG
 * instance, starts an MPS daemon, changes a compute mode) it records "claim U is setting up device
 * D" here, and clears the record once the claim is in the checkpoint (or its failed setup was
 * undone). A record that outlives its prepare is a process that died in between: at the next start
 * the driver adopts it if the claim reached the checkpoint, and releases the device otherwise, so
 * that no instance or daemon is left that nothing will ever remove.
 *
 * <p>One small file per claim in a directory beside the checkpoint, {@code <uid,
 * URL-encoded>.intent} holding {@code {"uid": ..., "devices": [...]}}, replaced atomically and
 * durably. Callers serialise per claim (the driver's claim lock).
 */
final class SetupJournal {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String SUFFIX = ".intent";

  private final Path dir;
  private final FileWrites files;

  SetupJournal(Path dir, FileWrites files) {
    this.dir = dir;
    this.files = files;
  }

  /** The journal of a checkpoint: the directory {@code setup-intents} beside its file. */
  static SetupJournal beside(Path checkpointFile) {
    return beside(checkpointFile, FileWrites.ATOMIC);
  }

  /** As {@link #beside(Path)}, writing through {@code files}. */
  static SetupJournal beside(Path checkpointFile, FileWrites files) {
    return new SetupJournal(checkpointFile.toAbsolutePath().resolveSibling("setup-intents"), files);
  }

  /** A claim whose setup of {@code devices} began and was not yet committed or undone. */
  record Intent(String uid, List<String> devices) {
    Intent {
      devices = List.copyOf(devices);
    }
  }

  /** Records, durably, that the claim is about to set up the device (kept with earlier ones). */
  void begin(String uid, String device) throws IOException {
    Set<String> devices =
        new LinkedHashSet<>(read(file(uid)).map(Intent::devices).orElse(List.of()));
    if (!devices.add(device)) {
      return;
    }
    ObjectNode n = JSON.createObjectNode();
    n.put("uid", uid);
    devices.forEach(n.putArray("devices")::add);
    try {
      files.write(file(uid), JSON.writeValueAsString(n) + "\n", true);
    } catch (IOException e) {
      throw new FileWriteException("setup intent", file(uid), e);
    }
  }

  /** Forgets the claim's intents: its setup is in the checkpoint, or was undone. */
  void clear(String uid) throws IOException {
    files.delete(file(uid), true);
  }

  /**
   * Every recorded intent. A file that cannot be read back is skipped (it is never torn: files are
   * replaced atomically), and left in place for an operator.
   */
  List<Intent> pending() throws IOException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    List<Intent> out = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(p -> p.getFileName().toString().endsWith(SUFFIX)).toList()) {
        read(f).ifPresent(out::add);
      }
    }
    return out;
  }

  Path dir() {
    return dir;
  }

  private Optional<Intent> read(Path f) throws IOException {
    if (!Files.isRegularFile(f)) {
      return Optional.empty();
    }
    try {
      JsonNode n = JSON.readTree(Files.readString(f, StandardCharsets.UTF_8));
      List<String> devices = new ArrayList<>();
      n.path("devices").forEach(d -> devices.add(d.asText()));
      String uid = n.path("uid").asText("");
      return uid.isEmpty() ? Optional.empty() : Optional.of(new Intent(uid, devices));
    } catch (JsonProcessingException e) {
      return Optional.empty();
    }
  }

  private Path file(String uid) {
    return dir.resolve(URLEncoder.encode(uid, StandardCharsets.UTF_8) + SUFFIX);
  }
}
