package io.kdra.core.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyRange;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The request policy's rounding as upstream 1.37's {@code roundUpRange} and {@code
 * violateValidRange} compute it (k8s.io/dynamic-resource-allocation v0.37.2, incubating and
 * experimental alike): thousandths with {@code DRAFractionalCapacityRange} on and a range of whole
 * thousandths, else whole units, each rounded up.
 */
class CapacityArithmeticTest {

  /** A range policy: min, step, max (null for none), no default. */
  static DeviceCapacity range(String min, String step, String max) {
    CapacityRequestPolicyRange r = new CapacityRequestPolicyRange();
    r.setMin(new Quantity(min));
    r.setStep(step == null ? null : new Quantity(step));
    r.setMax(max == null ? null : new Quantity(max));
    CapacityRequestPolicy p = new CapacityRequestPolicy();
    p.setValidRange(r);
    DeviceCapacity c = new DeviceCapacity();
    c.setValue(new Quantity("100P"));
    c.setRequestPolicy(p);
    return c;
  }

  /** Columns: capacity, gate on, request, the consumption as Quantity.String() prints it. */
  static Stream<Arguments> rounded() {
    return Stream.of(
        arguments(
            named("milli: up to the next quarter", range("500m", "250m", null)),
            true,
            "1.1",
            "1250m"),
        arguments(
            named("milli: a whole result is printed whole", range("500m", "250m", null)),
            true,
            "2",
            "2"),
        arguments(
            named("milli: below min gives min", range("500m", "250m", null)), true, "100m", "500m"),
        arguments(
            named("milli: whole bounds step in thousandths too", range("1", "2", null)),
            true,
            "1500m",
            "3"),
        arguments(
            named(
                "gate off: each quantity rounded up to a whole unit", range("500m", "250m", null)),
            false,
            "1.1",
            "2"),
        arguments(
            named("gate on, a step below 1m: whole units", range("0", "1u", null)),
            true,
            "300m",
            "1"),
        arguments(
            named("gate on, a min past the milli range: whole units", range("10P", "1", null)),
            true,
            "10000000000000001500m",
            "10000000000000002"),
        arguments(
            named("no step: the request as is", range("500m", null, null)), true, "1234m", "1234m"),
        arguments(
            named("binary step keeps its format", range("1Gi", "512Mi", null)),
            true,
            "1.2Gi",
            "1536Mi"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rounded")
  void roundsAsUpstream(DeviceCapacity cap, boolean fractional, String request, String expected) {
    assertThat(
            Capacity.consumption(io.kdra.core.model.Quantity.parse(request), cap, fractional)
                .toString())
        .isEqualTo(expected);
  }

  /** Columns: capacity, gate on, request, the error's text. */
  static Stream<Arguments> unrepresentable() {
    return Stream.of(
        arguments(
            named("milli: a request finer than 1m", range("500m", "250m", null)),
            true,
            "1000500u",
            "request 1000500u is not a representable milli value"),
        arguments(
            named("milli: a request past the milli range", range("0", "1", null)),
            true,
            "10P",
            "request 10P is not a representable milli value"),
        arguments(
            named("milli: rounding up passes the milli range", range("0", "9P", null)),
            true,
            "9100T",
            "rounding request 9100T up to the next step passes the milli-value range"),
        arguments(
            named("whole units: a request past int64", range("0", "1", null)),
            false,
            "10E",
            "request 10E exceeds MaxInt64"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unrepresentable")
  void refusesWhatTheArithmeticCannotRepresent(
      DeviceCapacity cap, boolean fractional, String request, String message) {
    assertThatThrownBy(
            () -> Capacity.consumption(io.kdra.core.model.Quantity.parse(request), cap, fractional))
        .isInstanceOf(Capacity.CapacityException.class)
        .hasMessage(
            "capacity request cannot be represented in the device's range arithmetic: " + message);
  }

  /** Columns: capacity, gate on, consumption, whether it violates the policy. */
  static Stream<Arguments> policy() {
    return Stream.of(
        arguments(named("milli: on a step", range("500m", "250m", "2")), true, "1750m", false),
        arguments(named("milli: off the step", range("500m", "250m", "2")), true, "1800m", true),
        arguments(named("milli: above max", range("500m", "250m", "2")), true, "2250m", true),
        arguments(named("milli: finer than 1m", range("500m", "250m", null)), true, "1500u", true),
        arguments(
            named("whole units: off the quarter step, on the unit", range("500m", "250m", null)),
            false,
            "1800m",
            false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("policy")
  void checksThePolicyAsUpstream(
      DeviceCapacity cap, boolean fractional, String consumption, boolean violates) {
    assertThat(
            Capacity.violatesPolicy(
                io.kdra.core.model.Quantity.parse(consumption), cap.getRequestPolicy(), fractional))
        .isEqualTo(violates);
  }
}
