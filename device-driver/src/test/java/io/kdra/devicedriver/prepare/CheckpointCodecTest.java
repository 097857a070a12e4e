package io.kdra.devicedriver.prepare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PreparedDevice;
import io.kdra.devicedriver.prepare.CheckpointCodec.CheckpointException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class CheckpointCodecTest {

  static PreparedClaim prepared(String uid) {
    return new PreparedClaim(
        new ClaimRef("ns", uid, "claim-" + uid),
        List.of(
            new PreparedDevice(
                List.of("gpu"),
                "node-a",
                "gpu-0",
                List.of("k8s.gpu.kdra.io/claim=" + uid + "-gpu-0")),
            new PreparedDevice(List.of(), "node-a", "gpu-1", List.of())),
        "k8s.gpu.kdra.io-claim_" + uid + ".json",
        "{\n  \"cdiVersion\": \"0.5.0\"\n}\n",
        uid.equals("a") ? "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" : "");
  }

  @Test
  void roundTripsExactly() throws Exception {
    Map<String, PreparedClaim> claims =
        new TreeMap<>(Map.of("a", prepared("a"), "b", prepared("b")));
    String text = CheckpointCodec.encode(claims);
    assertThat(CheckpointCodec.decode(text)).isEqualTo(claims);
    // Encoding what was decoded gives the same bytes: the format is canonical.
    assertThat(CheckpointCodec.encode(CheckpointCodec.decode(text))).isEqualTo(text);
  }

  @Test
  void emptyRoundTrips() throws Exception {
    assertThat(CheckpointCodec.decode(CheckpointCodec.encode(Map.of()))).isEmpty();
  }

  @Test
  void toleratesReformatting() throws Exception {
    String text = CheckpointCodec.encode(Map.of("a", prepared("a")));
    String compact =
        new com.fasterxml.jackson.databind.ObjectMapper()
            .writeValueAsString(new com.fasterxml.jackson.databind.ObjectMapper().readTree(text));
    assertThat(compact).doesNotContain("\n  ");
    assertThat(CheckpointCodec.decode(compact)).containsOnlyKeys("a");
  }

  record Bad(String text, boolean corrupt, String message) {}

  static Stream<Named<Bad>> bad() {
    String good = CheckpointCodec.encode(Map.of("a", prepared("a")));
    return Stream.of(
        Named.of("truncated", new Bad(good.substring(0, good.length() / 2), true, "not JSON")),
        Named.of(
            "edited device", new Bad(good.replace("gpu-1", "gpu-7"), true, "checksum mismatch")),
        Named.of("no apiVersion", new Bad("{}", true, "apiVersion \"\" is not supported")),
        Named.of(
            "newer version",
            new Bad(
                good.replace("checkpoint.kdra.io/v1", "checkpoint.kdra.io/v2"),
                false,
                "\"checkpoint.kdra.io/v2\" is not supported")),
        Named.of(
            "entry missing a field",
            new Bad(
                good.replace("\"cdiSpecFile\"", "\"specFile\""), true, "cdiSpecFile is missing")),
        Named.of("array", new Bad("[]", true, "not a JSON object")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bad")
  void refusesDamageAndUnknownVersions(Bad b) {
    assertThatThrownBy(() -> CheckpointCodec.decode(b.text()))
        .isInstanceOfSatisfying(
            CheckpointException.class,
            e -> {
              assertThat(e.corrupt()).isEqualTo(b.corrupt());
              assertThat(e.getMessage()).contains(b.message());
            });
  }
}
