package io.kdra.core.cel;

import static io.kdra.core.cel.SelectorDevices.ENV;
import static io.kdra.core.cel.SelectorDevices.h100;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.kdra.core.cel.CelSelectorException.Kind;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Selector errors as upstream reports them: compile errors with position and reason, runtime errors
 * that abort the evaluation instead of reading as false.
 */
class SelectorErrorsTest {

  static Stream<Arguments> compileErrors() {
    return Stream.of(
        arguments(named("syntax error", "device.driver == "), "Syntax error", 1),
        arguments(
            named("undeclared variable", "devce.driver == \"x\""),
            "undeclared reference to 'devce'",
            1),
        arguments(
            named("unknown field of device", "device.vendor == \"x\""),
            "undefined field 'vendor'",
            1),
        arguments(named("non-bool result", "device.driver"), "must evaluate to bool", -1),
        arguments(
            named("wrong argument type", "quantity(1) == quantity(\"1\")"),
            "found no matching overload for 'quantity'",
            1),
        arguments(
            named(
                "duration() of an int (cel-go 0.29 dropped the overload)",
                "duration(1 + 1) > duration(\"0s\")"),
            "found no matching overload for 'duration' applied to '(int)'",
            1),
        arguments(
            named("mixed list literal", "[1, \"a\"].size() == 2"),
            "expected type 'int' but found 'string'",
            1),
        arguments(
            named("format with too many arguments", "\"%s\".format([\"a\", \"b\"]) == \"a\""),
            "too many arguments supplied to string.format",
            1),
        arguments(
            named("invalid literal regex", "\"a\".matches(\"[\")"), "invalid matches argument", 1),
        arguments(
            named("string reverse is version 3", "\"abc\".reverse() == \"cba\""),
            "found no matching overload for 'reverse'",
            1),
        arguments(
            named("constant conversion that fails", "int(\"x\") == 1"),
            "program instantiation failed",
            1),
        arguments(
            named("sign is not a member function", "quantity(\"1\").sign() == 1"),
            "found no matching overload for 'sign'",
            1),
        arguments(
            named("sum of strings", "[\"a\"].sum() == \"a\""),
            "found no matching overload for 'sum'",
            1),
        arguments(
            named("min of lists", "[[1]].min() == [1]"), "found no matching overload for 'min'", 1),
        // attribute values are dyn since 1.37 (any before), and so must a list's other elements be
        arguments(
            named(
                "attribute value beside an int in a list",
                "[device.attributes[\"gpu.example.com\"].model, 1].size() == 2"),
            "expected type 'dyn' but found 'int'",
            1),
        arguments(
            named("non-bool result names its type", "device.driver"),
            "must evaluate to bool or the unknown type, not string",
            -1),
        arguments(
            named(
                "comparing quantity with <",
                "device.capacity[\"gpu.example.com\"].memory < quantity(\"1Gi\")"),
            "found no matching overload for '_<_'",
            1),
        arguments(
            named("double(string) that Go's ParseFloat rejects", "double(\" 1\") == 1.0"),
            "program instantiation failed",
            1),
        arguments(
            named("sortBy(x, -x) of an empty list is a list of double", "[].sortBy(x, -x) == [1]"),
            "found no matching overload for '_==_' applied to '(list(double), list(int))'",
            1),
        arguments(
            named("x + x over an empty list is a list of bytes", "[].map(x, x + x) == [1]"),
            "found no matching overload for '_==_' applied to '(list(bytes), list(int))'",
            1),
        // not declared since cel-go 0.29 (before, its literal validator refused the constant)
        arguments(
            named("duration() of an int literal", "duration(2000000000) == duration(\"2s\")"),
            "found no matching overload for 'duration' applied to '(int)'",
            1),
        arguments(
            named("a double literal out of range", "1e400 > 0.0"), "invalid double literal", 1),
        arguments(
            named("a duration past int64 nanoseconds", "duration(\"2562048h\") > duration(\"1h\")"),
            "invalid duration argument",
            1),
        arguments(
            named(
                "a timestamp with a lower-case T",
                "timestamp(\"2024-01-01t10:00:00Z\") > timestamp(0)"),
            "invalid timestamp argument",
            1),
        arguments(
            named("sort() of lists", "[[1]].sort().size() == 1"),
            "found no matching overload for 'sort'",
            1));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("compileErrors")
  void reportsCompileErrorsWithPositionAndReason(String expression, String reason, int line) {
    assertThatThrownBy(() -> ENV.compile(expression))
        .isInstanceOfSatisfying(
            CelSelectorException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(Kind.COMPILE);
              assertThat(e.reason()).contains(reason);
              assertThat(e.getMessage()).contains(expression);
              if (line > 0) {
                assertThat(e.position())
                    .hasValueSatisfying(p -> assertThat(p.line()).isEqualTo(line));
              }
            });
  }

  static Stream<Arguments> runtimeErrors() {
    return Stream.of(
        arguments(
            named("the smallest int modulo -1 overflows", "-9223372036854775808 % -1 == 0"),
            "integer overflow"),
        arguments(
            named(
                "a timestamp past year 9999",
                "timestamp(\"9999-12-31T23:59:59Z\") + duration(\"1s\") > timestamp(0)"),
            "timestamp overflow"),
        arguments(
            named(
                "missing attribute is an error, not false",
                "device.attributes[\"gpu.example.com\"].nosuch == \"x\""),
            "no such key: nosuch"),
        arguments(
            named(
                "membership in a non-empty constant list propagates the error",
                "device.attributes[\"gpu.example.com\"].nosuch in [1, 2]"),
            "no such key: nosuch"),
        arguments(
            named(
                "membership in an empty list that is not a literal propagates the error",
                "device.attributes[\"gpu.example.com\"].nosuch in [[]][0]"),
            "no such key: nosuch"),
        arguments(
            named("invalid quantity literal", "sign(quantity(\"1.5GB\")) == 1"),
            "quantities must match"),
        arguments(
            named(
                "equality with an add() result on the right, as upstream",
                "quantity(\"2\") == quantity(\"1\").add(1)"),
            "no such overload"),
        arguments(
            named("asInteger of a fraction", "quantity(\"500m\").asInteger() == 0"),
            "cannot convert value to integer"),
        arguments(
            named("invalid semver literal", "semver(\"v1\").major() == 1"),
            "could not parse v1 as semver"),
        arguments(
            named("dyn attribute that is not bool", "device.attributes[\"gpu.example.com\"].model"),
            "could not be converted to bool"),
        arguments(named("ordering a NaN", "0.0 / 0.0 < 1.0"), "NaN values cannot be ordered"),
        // results typed dyn compile since 1.37 (the type of attribute values); a free type
        // parameter of the result is dyn too, as cel-go leaves it unbound
        arguments(
            named(
                "dyn result that is not bool",
                "optional.of(1).optMap(x, x + 1).orValue(dyn(true))"),
            "could not be converted to bool"),
        // (cel-java's wording: "Index out of bounds", the key alone)
        arguments(named("element of an empty list as result", "[][0]"), "ndex out of bounds: 0"),
        arguments(named("value of an empty map as result", "{}[\"nokey\"]"), "nokey"),
        arguments(
            named("lists.range of a negative size (cel-go 0.29)", "lists.range(-1) == []"),
            "lists.range: size must be non-negative, got -1"),
        arguments(
            named("lists.range past its maximum size", "lists.range(1000001).size() > 0"),
            "lists.range: size 1000001 exceeds maximum allowed (1000000)"),
        arguments(
            named("sort() of mixed types", "[dyn(1), dyn(\"a\")].sort().size() == 2"),
            "list elements must have the same type"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("runtimeErrors")
  void runtimeErrorsAbortInsteadOfBeingFalse(String expression, String reason) {
    CompiledSelector selector = ENV.compile(expression);
    assertThatThrownBy(() -> selector.matches(h100()))
        .isInstanceOfSatisfying(
            CelSelectorException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(Kind.RUNTIME);
              assertThat(e.reason()).contains(reason);
              assertThat(e.expression()).isEqualTo(expression);
            });
  }
}
