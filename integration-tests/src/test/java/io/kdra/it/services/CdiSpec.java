package io.kdra.it.services;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What a CDI spec file (the device-driver's, one per claim) gives a container: its device ids
 * ({@code kind=name}), and the env var names and device nodes of its devices' and its common
 * container edits.
 */
public record CdiSpec(List<String> ids, Set<String> envNames, Set<String> deviceNodes) {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The spec in {@code file}; empty when there is none (not prepared, or unprepared again). */
  public static Optional<CdiSpec> read(Path file) {
    if (!Files.isRegularFile(file)) {
      return Optional.empty();
    }
    try {
      return Optional.of(parse(Files.readString(file)));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  public static CdiSpec parse(String json) throws IOException {
    JsonNode spec = JSON.readTree(json);
    String kind = spec.path("kind").asText();
    List<String> ids = new ArrayList<>();
    Set<String> env = new LinkedHashSet<>();
    Set<String> nodes = new LinkedHashSet<>();
    for (JsonNode device : spec.path("devices")) {
      ids.add(kind + "=" + device.path("name").asText());
      edits(device.path("containerEdits"), env, nodes);
    }
    edits(spec.path("containerEdits"), env, nodes);
    return new CdiSpec(
        List.copyOf(ids), Collections.unmodifiableSet(env), Collections.unmodifiableSet(nodes));
  }

  private static void edits(JsonNode edits, Set<String> env, Set<String> nodes) {
    for (JsonNode e : edits.path("env")) {
      String entry = e.asText();
      env.add(entry.contains("=") ? entry.substring(0, entry.indexOf('=')) : entry);
    }
    for (JsonNode n : edits.path("deviceNodes")) {
      nodes.add(n.path("path").asText());
    }
  }
}
