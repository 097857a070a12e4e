package io.kdra.core.cel;

import static io.kdra.core.cel.SelectorDevices.ENV;
import static io.kdra.core.cel.SelectorDevices.h100;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.kdra.core.cel.CelSelectorException.Kind;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Selector cost as upstream limits it: length and estimated cost at validation, actual cost in
 * cel-go's units at run time, and the runtime limit.
 */
class SelectorCostTest {

  @Test
  void validationRejectsTooLongExpressions() {
    String expression =
        "device.driver == \"" + "x".repeat(DeviceSelectorEnvironment.MAX_EXPRESSION_LENGTH) + "\"";
    assertThat(ENV.validate(expression))
        .hasValueSatisfying(
            e -> {
              assertThat(e.kind()).isEqualTo(Kind.TOO_LONG);
              assertThat(e.reason()).contains("at most 10240 characters");
            });
  }

  @Test
  void validationRejectsExpressionsWhoseEstimatedCostIsTooHigh() {
    // 32 attributes x 32 x 32 x 32 nested iterations: about a million steps and more
    String expression =
        "device.attributes[\"gpu.example.com\"].all(a, device.attributes[\"gpu.example.com\"]"
            + ".all(b, device.attributes[\"gpu.example.com\"].all(c, device.attributes[\"gpu.example.com\"]"
            + ".all(d, a.size() + b.size() + c.size() + d.size() > 0))))";
    assertThat(ENV.validate(expression))
        .hasValueSatisfying(
            e -> {
              assertThat(e.kind()).isEqualTo(Kind.COST_LIMIT);
              assertThat(e.reason()).contains("exceeds the limit of 1000000");
            });
    assertThat(ENV.validate("device.attributes[\"gpu.example.com\"].all(a, a.size() > 0)"))
        .isEmpty();
    assertThat(ENV.validate("device.driver == \"gpu.example.com\"")).isEmpty();
  }

  @Test
  void runtimeCostIsMeteredForExpressionsAboveTheEstimate() {
    DeviceSelectorEnvironment env = DeviceSelectorEnvironment.withMaxCost(50);
    CompiledSelector cheap = env.compile("device.driver == \"gpu.example.com\"");
    assertThat(cheap.matches(h100())).isTrue();
    CompiledSelector loop =
        env.compile("[1,2,3,4,5,6,7,8,9,10].all(i, [1,2,3,4,5,6,7,8,9,10].all(j, i * j > 0))");
    assertThat(loop.estimatedCost()).isGreaterThan(50);
    assertThatThrownBy(() -> loop.matches(h100()))
        .isInstanceOfSatisfying(
            CelSelectorException.class, e -> assertThat(e.kind()).isEqualTo(Kind.COST_LIMIT));
  }

  /** Actual costs in cel-go's units, as upstream's cost tracker reports them (cel-go 0.26). */
  static Stream<Arguments> actualCosts() {
    return Stream.of(
        arguments("true", 0L),
        arguments("device.attributes[\"gpu.example.com\"].model == \"H100\"", 5L),
        arguments("has(device.attributes[\"gpu.example.com\"].model)", 3L),
        arguments("[1, 2].size() == 2", 2L), // a constant list is folded
        arguments("device.attributes[\"gpu.example.com\"].numaNode in [1, 2]", 4L),
        arguments("{\"a\": device.driver}.size() == 1", 34L),
        arguments("[device.driver][0] == \"x\"", 15L),
        arguments("lists.range(10).all(j, j >= 0)", 72L),
        arguments("[1,2,3].exists_one(x, x == 2)", 10L), // a conditional's attribute branch is free
        arguments("[1,2,3].filter(x, x > 1).size() == 2", 35L),
        arguments("device.attributes[\"gpu.example.com\"].?model.orValue(\"\") == \"H100\"", 5L),
        arguments("[\"b\",\"a\"].sortBy(x, x)[0] == \"a\"", 51L),
        arguments("format.dns1123Label().validate(\"abc\").hasValue()", 10L),
        arguments("device.attributes[\"gpu.example.com\"].model.includes(\"H100\")", 4L),
        arguments("lists.range(40).includes(39)", 91L),
        arguments("matches(device.attributes[\"gpu.example.com\"].model, \"H.*\")", 5L),
        arguments("lists.range(350).all(i, lists.range(350).all(j, i + j >= 0))", 985612L));
  }

  @ParameterizedTest
  @MethodSource("actualCosts")
  void actualCostIsCelGos(String expression, long cost) {
    assertThat(ENV.compile(expression).actualCost(h100())).hasValue(cost);
  }

  @Test
  void runtimeCostLimitTripsInCelGoUnits() {
    // estimated above the limit, but its actual cost (729,009 upstream) is not
    CompiledSelector exists =
        ENV.compile("lists.range(400).all(i, lists.range(400).exists(j, j == i))");
    assertThat(exists.exceedsCostLimit()).isTrue();
    assertThat(exists.matches(h100())).isTrue();
    assertThatThrownBy(
            () ->
                ENV.compile("lists.range(355).all(i, lists.range(355).all(j, i + j >= 0))")
                    .matches(h100()))
        .isInstanceOfSatisfying(
            CelSelectorException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(Kind.COST_LIMIT);
              assertThat(e.reason()).isEqualTo("operation cancelled: actual cost limit exceeded");
            });
  }
}
