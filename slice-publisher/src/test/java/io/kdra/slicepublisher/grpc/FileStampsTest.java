package io.kdra.slicepublisher.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileStampsTest {
  @TempDir Path dir;

  @Test
  void aReplacedFileIsChangedAndAnUntouchedOneIsNot() throws Exception {
    Path cert = Files.writeString(dir.resolve("tls.crt"), "one");
    Path key = Files.writeString(dir.resolve("tls.key"), "key");
    FileStamps before = FileStamps.of(List.of(cert, key));
    assertThat(FileStamps.of(List.of(cert, key)).changedSince(before)).isEmpty();

    Files.writeString(cert, "renewed");
    Files.setLastModifiedTime(cert, FileTime.from(Instant.now().plusSeconds(5)));
    assertThat(FileStamps.of(List.of(cert, key)).changedSince(before)).containsExactly(cert);
  }

  @Test
  void aFileThatGoesOrComesIsChanged() throws Exception {
    Path cert = dir.resolve("tls.crt");
    FileStamps absent = FileStamps.of(List.of(cert));
    Files.writeString(cert, "one");
    assertThat(FileStamps.of(List.of(cert)).changedSince(absent)).containsExactly(cert);
    FileStamps present = FileStamps.of(List.of(cert));
    Files.delete(cert);
    assertThat(FileStamps.of(List.of(cert)).changedSince(present)).containsExactly(cert);
  }
}
