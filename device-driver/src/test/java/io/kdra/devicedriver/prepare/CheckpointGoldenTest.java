package io.kdra.devicedriver.prepare;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PreparedDevice;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A v1 checkpoint as drivers of that version wrote it on nodes, committed byte for byte ({@code
 * checkpoints/v1.json}, written once by {@link CheckpointCodec#encode} from {@link #goldenClaims}).
 * Nodes keep such files across driver upgrades, so a codec change that cannot read it would start
 * the driver empty and forget prepared claims. A format change adds a new apiVersion with a
 * conversion from v1, and this file stays as it is.
 */
class CheckpointGoldenTest {

  private static final String GOLDEN = "checkpoints/v1.json";

  /** What the golden file holds, spelled out here rather than built by shared fixtures. */
  static SortedMap<String, PreparedClaim> goldenClaims() {
    String uidA = "0b6c3a58-6d7e-4f0e-9a55-2a1c0e7f4b11";
    String uidB = "f3e1d2c4-1111-4a2b-8c3d-9e8f7a6b5c4d";
    SortedMap<String, PreparedClaim> claims = new TreeMap<>();
    claims.put(
        uidA,
        new PreparedClaim(
            new ClaimRef("team-a", uidA, "trainer-gpus"),
            List.of(
                new PreparedDevice(
                    List.of("gpus"),
                    "node-a",
                    "gpu-0",
                    List.of("k8s.gpu.kdra.io/claim=" + uidA + "-gpu-0")),
                new PreparedDevice(
                    List.of("gpus", "gpus/large"),
                    "node-a",
                    "gpu-1",
                    List.of("k8s.gpu.kdra.io/claim=" + uidA + "-gpu-1"))),
            "k8s.gpu.kdra.io-claim_" + uidA + ".json",
            "{\n  \"cdiVersion\": \"0.5.0\",\n  \"kind\": \"k8s.gpu.kdra.io/claim\"\n}\n",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
    claims.put(
        uidB,
        new PreparedClaim(
            new ClaimRef("default", uidB, "shared-nic"),
            List.of(new PreparedDevice(List.of("nic"), "node-a", "eth-1", List.of())),
            "k8s.gpu.kdra.io-claim_" + uidB + ".json",
            "{}\n",
            ""));
    return claims;
  }

  @Test
  void theCommittedV1CheckpointDecodesToItsClaims() throws Exception {
    assertThat(CheckpointCodec.decode(golden())).isEqualTo(goldenClaims());
  }

  /**
   * The driver still writes exactly v1, so a driver rolled back to the previous release reads what
   * this one wrote. A new version fails here on purpose: keep decoding v1 (the test above), and
   * give the new version a golden file of its own.
   */
  @Test
  void theseClaimsStillEncodeToTheCommittedBytes() throws Exception {
    assertThat(CheckpointCodec.encode(goldenClaims())).isEqualTo(golden());
  }

  /** On a node: the store opens the file as it is and keeps every claim (nothing moved aside). */
  @Test
  void aDriverStartingOnTheCommittedCheckpointKeepsItsClaims(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("checkpoint.json");
    Files.writeString(file, golden());
    CheckpointStore store = CheckpointStore.open(file, Clock.systemUTC());
    assertThat(store.all()).isEqualTo(goldenClaims());
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files).containsExactly(file);
    }
  }

  private static String golden() throws IOException {
    try (InputStream in = CheckpointGoldenTest.class.getClassLoader().getResourceAsStream(GOLDEN)) {
      assertThat(in).as(GOLDEN).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
