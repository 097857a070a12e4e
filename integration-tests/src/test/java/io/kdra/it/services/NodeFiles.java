package io.kdra.it.services;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** What a node's driver left on disk: CDI specs and checkpoint entries, by claim UID. */
public final class NodeFiles {

  private static final String CDI_PREFIX = "k8s." + Stack.DRIVER + "-claim_";
  private static final ObjectMapper JSON = new ObjectMapper();

  private NodeFiles() {}

  /** Claim UIDs of the driver's CDI spec files in {@code cdiDir}. */
  public static List<String> cdiClaimUids(Path cdiDir) {
    if (!Files.isDirectory(cdiDir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(cdiDir)) {
      return files
          .map(f -> f.getFileName().toString())
          .filter(n -> n.startsWith(CDI_PREFIX) && n.endsWith(".json"))
          .map(n -> n.substring(CDI_PREFIX.length(), n.length() - ".json".length()))
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Claim UIDs of the driver's checkpoint ({@code preparedClaims}); none without a file. */
  public static List<String> checkpointClaimUids(Path checkpoint) {
    JsonNode root;
    try {
      root = JSON.readTree(Files.readString(checkpoint));
    } catch (NoSuchFileException e) {
      return List.of();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> uids = new ArrayList<>();
    JsonNode prepared = root.path("preparedClaims");
    prepared.fieldNames().forEachRemaining(uids::add);
    return uids;
  }
}
