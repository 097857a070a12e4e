package io.kdra.it.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Files that only their owner may read (0600), in directories only the owner may enter (0700): what
 * holds a credential, i.e. the control plane's keys, the services' tokens and kubeconfigs, the
 * demo's admin kubeconfig. A file is created with its mode before anything is written to it, so no
 * other user can open it in between.
 */
public final class OwnerOnly {

  static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");
  static final Set<PosixFilePermission> DIRECTORY = PosixFilePermissions.fromString("rwx------");

  private OwnerOnly() {}

  /** Writes {@code content} to {@code file}, 0600; missing parents are created 0700. */
  public static void write(Path file, String content) {
    try {
      createDirectories(file.getParent());
      if (Files.exists(file)) {
        Files.setPosixFilePermissions(file, FILE);
      } else {
        Files.createFile(file, attribute(FILE));
      }
      Files.writeString(file, content);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Creates {@code dir} and its missing parents 0700, and makes {@code dir} itself 0700. */
  public static Path createDirectories(Path dir) {
    try {
      Files.createDirectories(dir, attribute(DIRECTORY));
      Files.setPosixFilePermissions(dir, DIRECTORY);
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Restricts a file that someone else wrote (e.g. kube-api-test's keys) to its owner. */
  public static void restrict(Path file) {
    try {
      Files.setPosixFilePermissions(file, Files.isDirectory(file) ? DIRECTORY : FILE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static FileAttribute<Set<PosixFilePermission>> attribute(
      Set<PosixFilePermission> permissions) {
    return PosixFilePermissions.asFileAttribute(permissions);
  }
}
