package io.kdra.core.cel.golang;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** double(string) as Go's strconv.ParseFloat(s, 64): each expected value Go's (null: an error). */
class GoParseFloatTest {

  static Stream<Arguments> goResults() {
    return Stream.of(
        arguments("1.5", 1.5),
        arguments("inf", Double.POSITIVE_INFINITY),
        arguments("+Inf", Double.POSITIVE_INFINITY),
        arguments("-Infinity", Double.NEGATIVE_INFINITY),
        arguments("INFINITY", Double.POSITIVE_INFINITY),
        arguments("nan", Double.NaN),
        arguments("NaN", Double.NaN),
        arguments("+nan", null),
        arguments("-nan", null),
        arguments("infinit", null),
        arguments("1_000", 1000.0),
        arguments("1__000", null),
        arguments("_1", null),
        arguments("1_", null),
        arguments("0x1p-2", 0.25),
        arguments("0x1_0p0", 16.0),
        arguments("0x_1p0", 1.0),
        arguments("0x1.8", null),
        arguments("0x1.8p1", 3.0),
        arguments("0X1P+2", 4.0),
        arguments(" 1", null),
        arguments("1 ", null),
        arguments("1d", null),
        arguments("1f", null),
        arguments("1e400", null),
        arguments("-1e400", null),
        arguments("1e-400", 0.0),
        arguments("+.5", 0.5),
        arguments("5.", 5.0),
        arguments(".", null),
        arguments("1e", null),
        arguments("1e+", null),
        arguments("0x", null),
        arguments("0b101", null),
        arguments("0o7", null),
        arguments("-0", -0.0),
        arguments("1E+2", 100.0),
        arguments("1e1_0", 1e+10),
        arguments("", null),
        arguments("+", null),
        arguments("-", null),
        arguments("1.2.3", null),
        arguments("1e5.5", null),
        arguments("0x1p1_0", 1024.0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("goResults")
  void parsesAsGo(String text, Double expected) {
    assertThat(GoParseFloat.parse(text).orElse(null)).isEqualTo(expected);
  }
}
