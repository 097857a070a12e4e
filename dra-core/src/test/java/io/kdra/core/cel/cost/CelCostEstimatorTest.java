package io.kdra.core.cel.cost;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.kdra.core.cel.CelSelectorException;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The estimated worst-case cost of selectors, each expected value the one upstream computes ({@code
 * dra-alloc-upstream cel}, k8s.io/dynamic-resource-allocation v0.36.3 over cel-go v0.26.0): API
 * validation accepts or rejects a selector by it, so it must be equal to the unit, including the
 * saturated, "unbounded" estimates of expressions whose sizes upstream cannot bound.
 */
class CelCostEstimatorTest {

  private static final DeviceSelectorEnvironment ENV = DeviceSelectorEnvironment.create();

  static Stream<Arguments> upstreamCosts() {
    return Stream.of(
        arguments("device.driver == \"gpu.kdra.io\"", "4"),
        arguments("device.attributes[\"gpu.kdra.io\"].model == \"a100\"", "5"),
        arguments("has(device.attributes[\"gpu.kdra.io\"].model)", "3"),
        arguments("\"gpu.kdra.io\" in device.attributes", "3"),
        arguments("device.allowMultipleAllocations", "2"),
        arguments("device.capacity[\"gpu.kdra.io\"].memory.compareTo(quantity(\"1Gi\")) > 0", "7"),
        arguments("device.capacity[\"gpu.kdra.io\"].memory == quantity(\"1Gi\")", "6"),
        arguments(
            "device.capacity[\"gpu.kdra.io\"].memory != quantity(\"1Gi\")", "1844674407370955269"),
        arguments("device.driver.startsWith(\"gpu\") && device.driver.matches(\"^g\")", "12"),
        arguments("device.attributes[\"gpu.kdra.io\"].model.lowerAscii().contains(\"a1\")", "18"),
        arguments("\"a\".charAt(0).trim() == \"a\"", "1844674407370955266"),
        arguments("[\"a\"].join(\",\") == \"a\"", "1844674407370955275"),
        arguments(
            "type(device.attributes[\"gpu.kdra.io\"].model) == string", "1844674407370955270"),
        arguments("device.attributes[\"gpu.kdra.io\"].all(k, v, v == 1)", "164"),
        arguments(
            "device.attributes.all(d, device.attributes[d].all(k, device.attributes[d][k] == 1))",
            "10499"),
        arguments("lists.range(10).all(i, lists.range(10).all(j, i != j || i == j))", "1172"),
        arguments("device.attributes[\"gpu.kdra.io\"].model.includes(\"H100\")", "68"),
        arguments("lists.range(40).includes(39)", "91"),
        // the global matches(string, regex) costs as the member one since cel-go 0.29
        arguments(
            "matches(device.attributes[\"gpu.kdra.io\"].model, \"H.*\") && device.driver.matches(\"^g\")",
            "20"),
        arguments("[1, 2].includes(2.0) && ![\"a\"].includes(1)", "1844674407370955288"),
        arguments("lists.range(1000).all(i, lists.range(1000).all(j, i != j))", "7016012"),
        arguments("[1,2,3].map(x, x * 2).filter(y, y > 2).exists_one(z, z == 4)", "133"),
        arguments("[3, 1, 2].sortBy(x, -x) == [3, 2, 1]", "115"),
        arguments("[\"b\", \"a\"].sort() == [\"a\", \"b\"]", "41"),
        arguments("sets.contains([1, 2], [2]) && [1, 1].distinct().size() == 1", "54"),
        arguments("\"abc\".replace(\"b\", \"xyz\").size() == 5", "3"),
        arguments("device.attributes[\"gpu.kdra.io\"].model.split(\"0\").size() == 2", "19"),
        arguments("isIP(\"1.2.3.4\") && cidr(\"10.0.0.0/8\").containsIP(\"10.1.2.3\")", "7"),
        arguments("url(\"https://x/y\").getHost() == \"x\"", "4"),
        arguments("semver(\"1.2.3\").isGreaterThan(semver(\"1.0.0\"))", "3"),
        arguments(
            "cel.bind(m, device.attributes[\"gpu.kdra.io\"].model, m == \"a100\" || m == \"h100\")",
            "18"),
        arguments("device.attributes[\"gpu.kdra.io\"].model + \"x\" == \"a100x\"", "12"),
        arguments("\"%s-%d\".format([\"a\", 1]) == \"a-1\"", "12"),
        arguments("{\"a\": 1}[\"a\"] == 1", "32"),
        arguments(
            "[device.attributes[\"gpu.kdra.io\"].uuid, device.attributes[\"gpu.kdra.io\"].model].sort().isSorted()",
            "39"),
        arguments("optional.of(1).optMap(x, x + 1).value() == 2", "19"),
        arguments("{\"a\": 1}[?\"a\"].optMap(x, x + 1) == optional.none()", "79"),
        arguments("[3, 1].sortBy(x, -x)[0] == 3", "82"),
        arguments("[\"a\", \"b\"].sort().isSorted()", "7378697629483821090"),
        // sort() of a list of dyn is dyn: the loop's variables too, so <= may compare strings
        arguments(
            "[device.attributes[\"gpu.kdra.io\"].missingInt, device.attributes[\"gpu.kdra.io\"].numaNode].sort().all(i, v, i <= v)",
            "7378697629483821115"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("upstreamCosts")
  void estimateEqualsUpstreams(String expression, String upstreamCost) {
    assertThat(Long.toUnsignedString(ENV.compile(expression).estimatedCost()))
        .isEqualTo(upstreamCost);
  }

  @Test
  void anEstimateAboveTheLimitIsRejectedAsApiValidationDoes() {
    String expression = "lists.range(1000).all(i, lists.range(1000).all(j, i != j))";
    assertThat(ENV.compile(expression).exceedsCostLimit()).isTrue();
    assertThat(ENV.validate(expression))
        .hasValueSatisfying(
            e -> assertThat(e.kind()).isEqualTo(CelSelectorException.Kind.COST_LIMIT));
    assertThat(
            ENV.compile("lists.range(10).all(i, lists.range(10).all(j, i != j || i == j))")
                .exceedsCostLimit())
        .isFalse();
  }

  @Test
  void goArithmeticOfUnsignedEstimates() {
    assertThat(Estimate.UNKNOWN.multiplyByCostFactor(0.1).max())
        .isEqualTo(Long.parseUnsignedLong("1844674407370955264"));
    assertThat(Estimate.fixed(Estimate.MAX).add(Estimate.fixed(1)))
        .isEqualTo(Estimate.fixed(Estimate.MAX));
    assertThat(Estimate.fixed(1L << 40).multiply(Estimate.fixed(1L << 40)).max())
        .isEqualTo(Estimate.MAX);
    assertThat(Estimate.multiplyByCostFactor(64, 0.1)).isEqualTo(7);
    // amd64's conversion of an out-of-range float64 to uint64
    assertThat(Estimate.fromDouble(Math.scalb(1.0, 64))).isEqualTo(Long.MIN_VALUE);
  }
}
