package io.kdra.it.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * Where {@code integration-tests/scripts/go-program.sh} puts the Go programs of this repository
 * (dra-alloc-upstream, kdra-karpenter-kwok): {@code $KDRA_CACHE_DIR/<cache dir>/<version>-linux-
 * <arch>/<stamp>/<binary>}, the stamp identifying this checkout's sources as the script computes
 * it, so that worktrees sharing the cache never run each other's build.
 */
public final class GoPrograms {

  private GoPrograms() {}

  /**
   * The cached binary built from {@code integration-tests/<sourceDir>}.
   *
   * @param sourceDir the program's directory under integration-tests (go.mod, go.sum, *.go)
   * @param cacheDir its directory in the kdra cache
   * @param version the version in the cache path (the module it wraps)
   * @param binary the binary's name
   */
  public static Path cached(String sourceDir, String cacheDir, String version, String binary) {
    return Leftovers.cacheDir()
        .resolve(cacheDir)
        .resolve(version + "-linux-" + arch())
        .resolve(sourceStamp(sourceDir))
        .resolve(binary);
  }

  /** {@code amd64} or {@code arm64}, as Go names this machine's architecture. */
  static String arch() {
    String arch = System.getProperty("os.arch");
    return switch (arch) {
      case "x86_64", "amd64" -> "amd64";
      case "aarch64", "arm64" -> "arm64";
      default -> arch;
    };
  }

  /** sha256 over go.mod, go.sum and the *.go files (byte order), first 12 hex digits. */
  public static String sourceStamp(String sourceDir) {
    // the tests run in integration-tests/; bin/demo and benchmarks from the repository root
    Path src = Path.of(sourceDir);
    if (!Files.isDirectory(src)) {
      src = Path.of("integration-tests", sourceDir);
    }
    try (Stream<Path> files = Files.list(src)) {
      List<Path> sources = new ArrayList<>(List.of(src.resolve("go.mod"), src.resolve("go.sum")));
      files
          .filter(p -> p.getFileName().toString().endsWith(".go"))
          // names are ASCII: String order is the byte order of the script's LC_ALL=C sort
          .sorted(Comparator.comparing(p -> p.getFileName().toString()))
          .forEach(sources::add);
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      for (Path p : sources) {
        sha.update(Files.readAllBytes(p));
      }
      return HexFormat.of().formatHex(sha.digest()).substring(0, 12);
    } catch (IOException | NoSuchAlgorithmException e) {
      throw new IllegalStateException("cannot read the Go program's sources in " + src, e);
    }
  }
}
