package io.kdra.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The shared scanner cuts text where apimachinery's parseQuantityString does. */
class QuantityTextTest {

  static Stream<Arguments> texts() {
    // text, value, num, denom, suffix, has digits, well formed
    return Stream.of(
        arguments("40Gi", "40", "40", "", "Gi", true, true),
        arguments("-007.50m", "-007.50", "7", "50", "m", true, true),
        arguments("+.5", "+.5", "0", "5", "", true, true),
        arguments("5.", "5.", "5", "", "", true, true),
        arguments("-000", "0", "0", "", "", true, true),
        arguments("-", "0", "0", "", "", false, true),
        arguments("Gi", "", "0", "", "Gi", false, true),
        arguments("1e-3", "1", "1", "", "e-3", true, true),
        arguments("1.2.3", "1.2", "1", "2", ".3", true, false),
        arguments("1 Gi", "1", "1", "", " Gi", true, false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("texts")
  void cutsLikeGo(
      String text,
      String value,
      String num,
      String denom,
      String suffix,
      boolean hasDigits,
      boolean wellFormed) {
    QuantityText.Parts p = QuantityText.scan(text);
    assertThat(p.value()).isEqualTo(value);
    assertThat(p.num()).isEqualTo(num);
    assertThat(p.denom()).isEqualTo(denom);
    assertThat(p.suffix(text)).isEqualTo(suffix);
    assertThat(p.hasDigits()).isEqualTo(hasDigits);
    assertThat(p.wellFormed()).isEqualTo(wellFormed);
  }

  static Stream<Arguments> suffixes() {
    return Stream.of(
        arguments("", 10, 0, Quantity.Format.DECIMAL_SI),
        arguments("Ki", 2, 10, Quantity.Format.BINARY_SI),
        arguments("E", 10, 18, Quantity.Format.DECIMAL_SI),
        arguments("e+3", 10, 3, Quantity.Format.DECIMAL_EXPONENT),
        // Go's int32(parsed): 2^32 + 1 is 1
        arguments("e4294967297", 10, 1, Quantity.Format.DECIMAL_EXPONENT));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("suffixes")
  void interpretsSuffixesLikeGo(String suffix, int base, int exponent, Quantity.Format format) {
    assertThat(QuantityText.interpret(suffix))
        .isEqualTo(new QuantityText.Suffix(base, exponent, format));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unknownSuffixes")
  void refusesOtherSuffixes(String suffix) {
    assertThat(QuantityText.interpret(suffix)).isNull();
  }

  static Stream<String> unknownSuffixes() {
    return Stream.of("e", "ki", "GB", "e1.5", " Gi");
  }
}
