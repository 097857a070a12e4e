package io.kdra.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class QualifiedNameTest {

  record Case(Supplier<QualifiedName> parse, String domain, String id, String text) {}

  private static Named<Case> c(
      String name, Supplier<QualifiedName> parse, String domain, String id, String text) {
    return Named.of(name, new Case(parse, domain, id, text));
  }

  static Stream<Named<Case>> cases() {
    String driver = "gpu.example.com";
    return Stream.of(
        c(
            "of: bare key gets the driver's domain",
            () -> QualifiedName.of("model", driver),
            driver,
            "model",
            "gpu.example.com/model"),
        c(
            "of: own domain spelled out",
            () -> QualifiedName.of("gpu.example.com/model", driver),
            driver,
            "model",
            "gpu.example.com/model"),
        c(
            "of: other domain kept",
            () -> QualifiedName.of("resource.kubernetes.io/pcieRoot", driver),
            "resource.kubernetes.io",
            "pcieRoot",
            "resource.kubernetes.io/pcieRoot"),
        c(
            "of: splits at the first slash only",
            () -> QualifiedName.of("a.com/b/c", driver),
            "a.com",
            "b/c",
            "a.com/b/c"),
        c("of: empty domain is kept empty", () -> QualifiedName.of("/x", driver), "", "x", "x"),
        c(
            "fully qualified: domain and id",
            () -> QualifiedName.parseFullyQualified("a.com/x"),
            "a.com",
            "x",
            "a.com/x"),
        c(
            "fully qualified: missing domain is empty",
            () -> QualifiedName.parseFullyQualified("numa"),
            "",
            "numa",
            "numa"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void parses(Case c) {
    QualifiedName q = c.parse().get();
    assertThat(q.domain()).isEqualTo(c.domain());
    assertThat(q.id()).isEqualTo(c.id());
    assertThat(q).hasToString(c.text());
  }

  @Test
  void bareAndSpelledOutKeysAreEqual() {
    assertThat(QualifiedName.of("model", "gpu.example.com"))
        .isEqualTo(QualifiedName.of("gpu.example.com/model", "other.example.com"));
  }

  @Test
  void rejectsNullParts() {
    assertThatThrownBy(() -> new QualifiedName(null, "x"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("domain");
    assertThatThrownBy(() -> new QualifiedName("d", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("id");
  }
}
