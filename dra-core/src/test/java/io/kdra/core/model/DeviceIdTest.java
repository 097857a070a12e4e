package io.kdra.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class DeviceIdTest {

  record Valid(String text, DeviceId id) {}

  static Stream<Named<Valid>> valid() {
    return Stream.of(
        Named.of(
            "three segments",
            new Valid(
                "gpu.example.com/node-a/gpu-0",
                new DeviceId("gpu.example.com", "node-a", "gpu-0"))),
        Named.of(
            "pool with slashes",
            new Valid(
                "d.com/rack-1/node-a/gpu-0", new DeviceId("d.com", "rack-1/node-a", "gpu-0"))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("valid")
  void parsesAndPrintsBack(Valid c) {
    DeviceId id = DeviceId.parse(c.text());
    assertThat(id).isEqualTo(c.id());
    assertThat(id).hasToString(c.text());
  }

  static Stream<Named<String>> invalid() {
    return Stream.of(
        Named.of("empty", ""),
        Named.of("one segment", "gpu"),
        Named.of("two segments", "d.com/gpu-0"),
        Named.of("empty driver", "/pool/gpu-0"),
        Named.of("empty pool", "d.com//gpu-0"),
        Named.of("empty device", "d.com/pool/"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalid")
  void rejects(String text) {
    assertThatThrownBy(() -> DeviceId.parse(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("invalid device id \"" + text + "\": expected <driver>/<pool>/<device>");
  }

  @Test
  void ordersByDriverThenPoolThenDevice() {
    List<DeviceId> ids =
        new ArrayList<>(
            List.of(
                new DeviceId("b", "a", "a"),
                new DeviceId("a", "b", "a"),
                new DeviceId("a", "a", "b"),
                new DeviceId("a", "a", "a")));
    Collections.shuffle(ids, new java.util.Random(1));
    Collections.sort(ids);
    assertThat(ids)
        .extracting(DeviceId::toString)
        .containsExactly("a/a/a", "a/a/b", "a/b/a", "b/a/a");
  }

  @Test
  void rejectsNullParts() {
    assertThatThrownBy(() -> new DeviceId("d", null, "x"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("pool");
  }
}
