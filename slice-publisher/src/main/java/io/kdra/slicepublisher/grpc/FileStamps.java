package io.kdra.slicepublisher.grpc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a set of files looked like (modification time and size, or absent): the kubelet replaces a
 * mounted Secret's files when the Secret changes, and a new stamp means new contents.
 */
record FileStamps(Map<Path, String> stamps) {

  static FileStamps of(List<Path> files) {
    Map<Path, String> stamps = new LinkedHashMap<>();
    for (Path f : files) {
      try {
        stamps.put(f, Files.getLastModifiedTime(f) + "/" + Files.size(f));
      } catch (IOException e) {
        stamps.put(f, "absent");
      }
    }
    return new FileStamps(Map.copyOf(stamps));
  }

  /** The files whose stamp differs from {@code before}'s. */
  List<Path> changedSince(FileStamps before) {
    return stamps.keySet().stream()
        .filter(f -> !stamps.get(f).equals(before.stamps().get(f))).sorted().toList();
  }
}
