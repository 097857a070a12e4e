package io.kdra.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.math.BigDecimal;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Canonical forms as apimachinery's resource.Quantity prints them (quantity_test.go). */
class QuantityTest {

  static Stream<Arguments> canonical() {
    return Stream.of(
        arguments(named("binary gibibytes", "40Gi"), "42949672960", "40Gi"),
        arguments(named("milli", "500m"), "0.5", "500m"),
        arguments(named("fractional decimal regroups", "1.5G"), "1500000000", "1500M"),
        arguments(named("plain bytes", "85899345920"), "85899345920", "85899345920"),
        arguments(named("thousand becomes k", "1000"), "1000", "1k"),
        arguments(
            named("fractional binary falls back to a smaller binary unit", "1.5Gi"),
            "1610612736",
            "1536Mi"),
        arguments(named("binary below 1024 prints decimal", "0.5Ki"), "512", "512"),
        arguments(
            named("binary with a fraction prints decimal", "1.0001Ki"), "1024.1024", "1024102400u"),
        arguments(named("exponent", "1e3"), "1000", "1e3"),
        arguments(named("exponent upper case", "5E-3"), "0.005", "5e-3"),
        arguments(named("negative binary", "-1Ki"), "-1024", "-1Ki"),
        arguments(named("explicit plus", "+12"), "12", "12"),
        arguments(named("leading dot", ".5"), "0.5", "500m"),
        arguments(named("trailing dot", "5."), "5", "5"),
        arguments(named("zero of any unit", "0Gi"), "0", "0"),
        arguments(named("nano", "1n"), "0.000000001", "1n"),
        arguments(named("below nano rounds up", "0.1n"), "0.000000001", "1n"),
        arguments(named("micro", "2u"), "0.000002", "2u"),
        arguments(named("exa", "2E"), "2000000000000000000", "2E"),
        arguments(named("beyond exa keeps E", "2000E"), "2000000000000000000000", "2000E"),
        arguments(named("exbibyte", "1Ei"), "1152921504606846976", "1Ei"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("canonical")
  void parsesExactlyAndPrintsCanonically(String text, String exactValue, String canonical) {
    Quantity q = Quantity.parse(text);
    assertThat(q.value()).isEqualByComparingTo(new BigDecimal(exactValue));
    assertThat(q).hasToString(canonical);
    assertThat(Quantity.parse(q.toString())).isEqualTo(q);
  }

  static Stream<Arguments> invalid() {
    return Stream.of(
        arguments(named("empty", ""), "empty string"),
        arguments(named("unknown suffix", "1.5GB"), "unknown suffix 'GB'"),
        arguments(named("lower-case kibi", "1ki"), "unknown suffix 'ki'"),
        arguments(named("no digits", "Gi"), "no digits"),
        arguments(named("only a sign", "-"), "no digits"),
        arguments(named("two dots", "1.2.3"), "unknown suffix '.3'"),
        arguments(named("exponent without digits", "1e"), "exponent 'e' is not a whole number"),
        arguments(named("space", "1 Gi"), "unknown suffix ' Gi'"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalid")
  void rejectsInvalidText(String text, String reason) {
    assertThatThrownBy(() -> Quantity.parse(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(reason);
    assertThat(Quantity.isQuantity(text)).isFalse();
  }

  static Stream<Arguments> comparisons() {
    return Stream.of(
        arguments(named("1Ki = 1024", "1Ki"), "1024", 0),
        arguments(named("1k < 1Ki", "1k"), "1Ki", -1),
        arguments(named("40Gi > 40G", "40Gi"), "40G", 1),
        arguments(named("500m = 0.5", "500m"), "0.5", 0),
        arguments(named("1e3 = 1k", "1e3"), "1k", 0),
        arguments(named("-1 < 0", "-1"), "0", -1));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("comparisons")
  void comparesByValueAcrossFormats(String a, String b, int expected) {
    assertThat(Integer.signum(Quantity.parse(a).compareTo(Quantity.parse(b)))).isEqualTo(expected);
    assertThat(Quantity.parse(a).equals(Quantity.parse(b))).isEqualTo(expected == 0);
  }

  static Stream<Arguments> integers() {
    return Stream.of(
        arguments(named("whole", "2k"), true, 2000L),
        arguments(named("fraction", "500m"), false, null),
        arguments(named("max int64", "9223372036854775807"), true, Long.MAX_VALUE),
        arguments(named("beyond int64", "9223372036854775808"), false, null),
        arguments(named("whole written with a fraction", "1.5k"), true, 1500L));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("integers")
  void convertsToIntegerOnlyWhenExact(String text, boolean integer, Long value) {
    Quantity q = Quantity.parse(text);
    assertThat(q.isInteger()).isEqualTo(integer);
    if (integer) {
      assertThat(q.asLong()).isEqualTo(value);
    } else {
      assertThatThrownBy(q::asLong)
          .isInstanceOf(ArithmeticException.class)
          .hasMessageContaining("cannot convert value to integer");
    }
  }

  static Stream<Arguments> arithmetic() {
    return Stream.of(
        arguments(named("binary sum keeps binary", "1Gi"), "1Gi", true, "2Gi"),
        arguments(named("decimal sum", "1.5G"), "500M", true, "2G"),
        arguments(named("difference below zero", "1"), "2", false, "-1"),
        arguments(named("format of the receiver", "1Mi"), "1M", true, "2048576"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("arithmetic")
  void addsAndSubtractsInTheReceiversFormat(String a, String b, boolean add, String expected) {
    Quantity x = Quantity.parse(a);
    Quantity y = Quantity.parse(b);
    assertThat(add ? x.add(y) : x.subtract(y)).hasToString(expected);
  }

  /** fabric8's quantity (amount and format split) as the services read it: one conversion. */
  static Stream<Arguments> apiQuantities() {
    return Stream.of(
        arguments(named("absent", null), null),
        arguments(named("no amount", new io.fabric8.kubernetes.api.model.Quantity()), null),
        arguments(
            named("amount and format", new io.fabric8.kubernetes.api.model.Quantity("1.5", "Gi")),
            "1536Mi"),
        arguments(
            named("amount only", new io.fabric8.kubernetes.api.model.Quantity("2500m")), "2500m"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("apiQuantities")
  void fromApi(io.fabric8.kubernetes.api.model.Quantity api, String canonical) {
    Quantity q = Quantity.fromApi(api);
    assertThat(q == null ? null : q.toString()).isEqualTo(canonical);
  }
}
