package io.kdra.devicedriver.prepare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PreparedDevice;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class CdiSpecRecoveryTest {
  private static final CdiNames NAMES = new CdiNames("gpu.kdra.io");

  private static String spec(String kind, String... deviceNames) {
    StringBuilder devices = new StringBuilder();
    for (String d : deviceNames) {
      devices.append(devices.isEmpty() ? "" : ",").append("{\"name\": \"").append(d).append("\"}");
    }
    return "{\"cdiVersion\": \"0.5.0\", \"kind\": \""
        + kind
        + "\", \"devices\": ["
        + devices
        + "]}";
  }

  @Test
  void rebuildsTheUidAndDevicesOfASpecThisDriverWrote() {
    String content = spec("k8s.gpu.kdra.io/claim", "u-1-gpu-0", "u-1-gpu-0-mig-1g5gb-3");

    PreparedClaim c =
        CdiSpecRecovery.claim(NAMES, "node-a", "k8s.gpu.kdra.io-claim_u-1.json", content);

    assertThat(c.claim()).isEqualTo(new ClaimRef("", "u-1", ""));
    assertThat(c.recovered()).isTrue();
    assertThat(c.devices())
        .containsExactly(
            new PreparedDevice(
                List.of(), "node-a", "gpu-0", List.of("k8s.gpu.kdra.io/claim=u-1-gpu-0")),
            new PreparedDevice(
                List.of(),
                "node-a",
                "gpu-0-mig-1g5gb-3",
                List.of("k8s.gpu.kdra.io/claim=u-1-gpu-0-mig-1g5gb-3")));
    assertThat(c.cdiSpecFile()).isEqualTo("k8s.gpu.kdra.io-claim_u-1.json");
    assertThat(c.cdiSpec()).isEqualTo(content);
  }

  record Bad(String file, String content, String problem) {}

  static Stream<Named<Bad>> unreadable() {
    String ok = "k8s.gpu.kdra.io-claim_u.json";
    return Stream.of(
        Named.of("not JSON", new Bad(ok, "{\"kind\": ", "not JSON")),
        Named.of("empty object", new Bad(ok, "{}", "kind is not k8s.gpu.kdra.io/claim")),
        Named.of(
            "another kind",
            new Bad(ok, spec("k8s.net.example.com/claim", "u-eth0"), "kind is not")),
        Named.of("no devices", new Bad(ok, spec("k8s.gpu.kdra.io/claim"), "no devices")),
        Named.of(
            "a device of another claim",
            new Bad(ok, spec("k8s.gpu.kdra.io/claim", "v-gpu-0"), "\"v-gpu-0\" is not")),
        Named.of(
            "no UID in the name",
            new Bad("k8s.gpu.kdra.io-claim_.json", spec("k8s.gpu.kdra.io/claim"), "claim UID")),
        Named.of(
            "another driver's name",
            new Bad("k8s.net.example.com-claim_u.json", "{}", "is not named")));
  }

  @ParameterizedTest
  @MethodSource("unreadable")
  void refusesWhatItCannotReadBackNamingWhy(Bad bad) {
    assertThatThrownBy(() -> CdiSpecRecovery.claim(NAMES, "node-a", bad.file(), bad.content()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(bad.problem());
  }
}
