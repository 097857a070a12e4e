package io.kdra.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class AttributeValueTest {

  record Valid(DeviceAttribute in, AttributeValue out, String type, Object cel) {}

  record Invalid(DeviceAttribute in, String message) {}

  static Stream<Named<Valid>> valid() {
    return Stream.of(
        Named.of(
            "int",
            new Valid(
                new DeviceAttributeBuilder().withInt(7L).build(),
                new AttributeValue.IntValue(7),
                "int",
                7L)),
        Named.of(
            "bool",
            new Valid(
                new DeviceAttributeBuilder().withBool(false).build(),
                new AttributeValue.BoolValue(false),
                "bool",
                false)),
        Named.of(
            "string",
            new Valid(
                new DeviceAttributeBuilder().withString("H100").build(),
                new AttributeValue.StringValue("H100"),
                "string",
                "H100")),
        Named.of(
            "version",
            new Valid(
                new DeviceAttributeBuilder().withVersion("1.2.3-rc.1").build(),
                new AttributeValue.VersionValue(Semver.parse("1.2.3-rc.1")),
                "version",
                Semver.parse("1.2.3-rc.1"))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("valid")
  void converts(Valid c) {
    AttributeValue v = AttributeValue.from(c.in());
    assertThat(v).isEqualTo(c.out());
    assertThat(v.typeName()).isEqualTo(c.type());
    assertThat(v.celValue()).isEqualTo(c.cel());
  }

  static Stream<Named<Invalid>> invalid() {
    return Stream.of(
        Named.of(
            "no value",
            new Invalid(
                new DeviceAttribute(),
                "exactly one of int, bool, string or version must be set, found 0")),
        Named.of(
            "two values",
            new Invalid(
                new DeviceAttributeBuilder().withInt(1L).withString("1").build(),
                "exactly one of int, bool, string or version must be set, found 2")),
        Named.of(
            "version with v",
            new Invalid(
                new DeviceAttributeBuilder().withVersion("v1.0.0").build(),
                "invalid semantic version \"v1.0.0\": expected "
                    + "MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD] without leading zeros")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalid")
  void rejects(Invalid c) {
    assertThatThrownBy(() -> AttributeValue.from(c.in()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(c.message());
  }

  @Test
  void equalityIsByTypeAndValue() {
    assertThat(new AttributeValue.IntValue(7)).isNotEqualTo(new AttributeValue.StringValue("7"));
    assertThat(new AttributeValue.StringValue("a"))
        .isNotEqualTo(new AttributeValue.StringValue("b"));
    assertThat(new AttributeValue.VersionValue(Semver.parse("1.0.0")))
        .isEqualTo(new AttributeValue.VersionValue(Semver.parse("1.0.0")));
  }
}
