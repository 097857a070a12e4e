package io.kdra.it.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OwnerOnlyTest {

  @TempDir Path tmp;

  @Test
  void aNewFileAndItsNewParentsAreOwnerOnly() throws Exception {
    Path file = tmp.resolve("a/b/token");
    OwnerOnly.write(file, "secret");
    assertThat(Files.readString(file)).isEqualTo("secret");
    assertThat(mode(file)).isEqualTo("rw-------");
    assertThat(mode(tmp.resolve("a/b"))).isEqualTo("rwx------");
    assertThat(mode(tmp.resolve("a"))).isEqualTo("rwx------");
  }

  @Test
  void anExistingReadableFileIsRestrictedBeforeItIsOverwritten() throws Exception {
    Path file = tmp.resolve("kubeconfig.yaml");
    Files.writeString(file, "old");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    OwnerOnly.write(file, "new");
    assertThat(Files.readString(file)).isEqualTo("new");
    assertThat(mode(file)).isEqualTo("rw-------");
  }

  @Test
  void restrictTakesAwayGroupAndOthers() throws Exception {
    Path key = Files.writeString(tmp.resolve("client.key"), "k");
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
    OwnerOnly.restrict(key);
    assertThat(mode(key)).isEqualTo("rw-------");
  }

  static String mode(Path p) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }
}
