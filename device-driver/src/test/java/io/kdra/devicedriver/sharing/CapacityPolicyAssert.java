package io.kdra.devicedriver.sharing;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.CapacityPolicy;
import java.util.Optional;

final class CapacityPolicyAssert {
  private CapacityPolicyAssert() {}

  static void range(CapacityPolicy p, String def, String min, String max, String step) {
    assertThat(p).isNotNull();
    assertThat(p.defaultValue()).isEqualTo(Quantity.parse(def));
    assertThat(p.validValues()).isEmpty();
    assertThat(p.min()).contains(Quantity.parse(min));
    assertThat(p.max()).isEqualTo(Optional.ofNullable(max).map(Quantity::parse));
    assertThat(p.step()).contains(Quantity.parse(step));
  }
}
