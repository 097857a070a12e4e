package io.kdra.core.validation;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.validation.ValidationError.ObjectRef;
import io.kdra.core.validation.ValidationError.Type;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ValidationErrorTest {

  private static final ObjectRef SLICE = new ObjectRef("ResourceSlice", "", "node-a-gpu");
  private static final ObjectRef CLAIM = new ObjectRef("ResourceClaim", "ns", "claim");

  record Case(ValidationError error, String expected) {}

  private static Named<Case> c(String name, ValidationError error, String expected) {
    return Named.of(name, new Case(error, expected));
  }

  private static ValidationError err(ObjectRef o, String field, Type t, Object v, String d) {
    return new ValidationError(o, field, t, Optional.ofNullable(v), d);
  }

  static Stream<Named<Case>> cases() {
    return Stream.of(
        c(
            "too many",
            err(SLICE, "spec.devices", Type.TOO_MANY, 130, "must have at most 128 items"),
            "ResourceSlice node-a-gpu: spec.devices: Too many: 130: must have at most 128 items"),
        c(
            "required without detail",
            err(CLAIM, "spec.x", Type.REQUIRED, null, ""),
            "ResourceClaim ns/claim: spec.x: Required value"),
        c(
            "required ignores a value",
            err(CLAIM, "spec.x", Type.REQUIRED, "v", "why"),
            "ResourceClaim ns/claim: spec.x: Required value: why"),
        c(
            "invalid quotes strings",
            err(SLICE, "f", Type.INVALID, "a\"b\\c\n", "bad"),
            "ResourceSlice node-a-gpu: f: Invalid value: \"a\\\"b\\\\c\\n\": bad"),
        c(
            "invalid without value",
            err(SLICE, "f", Type.INVALID, null, "bad"),
            "ResourceSlice node-a-gpu: f: Invalid value: bad"),
        c(
            "invalid number",
            err(SLICE, "f", Type.INVALID, -1L, "must be greater than zero"),
            "ResourceSlice node-a-gpu: f: Invalid value: -1: must be greater than zero"),
        c(
            "duplicate",
            err(SLICE, "spec.devices[1]", Type.DUPLICATE, "gpu-0", ""),
            "ResourceSlice node-a-gpu: spec.devices[1]: Duplicate value: \"gpu-0\""),
        c(
            "unsupported",
            err(
                CLAIM,
                "m",
                Type.NOT_SUPPORTED,
                "Some",
                "supported values: \"All\", \"ExactCount\""),
            "ResourceClaim ns/claim: m: Unsupported value: \"Some\": supported values: \"All\", "
                + "\"ExactCount\""),
        c(
            "too long hides the value",
            err(SLICE, "s", Type.TOO_LONG, "xxx", "may not be more than 64 bytes"),
            "ResourceSlice node-a-gpu: s: Too long: may not be more than 64 bytes"),
        c(
            "forbidden",
            err(CLAIM, "status.reservedFor", Type.FORBIDDEN, null, "no"),
            "ResourceClaim ns/claim: status.reservedFor: Forbidden: no"),
        c(
            "list value",
            err(SLICE, "f", Type.INVALID, List.of("a", 1), "x"),
            "ResourceSlice node-a-gpu: f: Invalid value: [\"a\", 1]: x"),
        c(
            "control character",
            err(SLICE, "f", Type.INVALID, "\u0001", "x"),
            "ResourceSlice node-a-gpu: f: Invalid value: \"\\x01\": x"),
        c(
            // strconv.Quote: named escapes, DEL and non-printing runes escaped, letters kept
            "as Go quotes",
            err(SLICE, "f", Type.INVALID, "\u0007\u000b\u007f\u00a0\u200be\u0301 é", "x"),
            "ResourceSlice node-a-gpu: f: Invalid value: \"\\a\\v\\x7f\\u00a0\\u200be\u0301 é\": x"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void formatsOneLine(Case c) {
    assertThat(c.error()).hasToString(c.expected());
  }

  @Test
  void fieldPathsPrintLikeKubernetesWithQuotedKeys() {
    FieldPath p =
        FieldPath.root("spec", "devices")
            .index(3)
            .child("attributes")
            .key("gpu.example.com/model")
            .child("string");
    assertThat(p).hasToString("spec.devices[3].attributes[\"gpu.example.com/model\"].string");
    assertThat(
            FieldPath.root("spec")
                .child("devices", "requests")
                .index(0)
                .child("firstAvailable")
                .index(2)
                .child("count"))
        .hasToString("spec.devices.requests[0].firstAvailable[2].count");
    assertThat(FieldPath.root("a").index(1))
        .isEqualTo(FieldPath.root("a").index(1))
        .isNotEqualTo(FieldPath.root("a").index(2));
  }

  @Test
  void nullNamespaceAndNameBecomeEmpty() {
    ObjectRef ref = new ObjectRef("DeviceClass", null, null);
    assertThat(ref.namespace()).isEmpty();
    assertThat(ref.name()).isEmpty();
    assertThat(err(ref, "f", Type.REQUIRED, null, null).detail()).isEmpty();
  }
}
