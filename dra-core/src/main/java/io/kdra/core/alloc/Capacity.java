package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyRange;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.kdra.core.model.Quantity;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.HashMap;
import java.util.Map;

/**
 * Consumable capacity (KEP 5075) arithmetic, as upstream's {@code CmpRequestOverCapacity}: a
 * requested amount is rounded up by the capacity's {@code requestPolicy} (to {@code min}, to {@code
 * min + n*step}, or to the next valid value); an unrequested capacity consumes the policy default
 * or, without a policy, the whole value. A device fits when the rounded request obeys the policy
 * and what is already consumed plus the new consumption stays within the value.
 */
final class Capacity {

  private Capacity() {}

  /** Whether the request names a capacity the device does not have (device is skipped). */
  static boolean requestsUnknownCapacity(RequestSpec r, CandidateDevice d) {
    Map<String, DeviceCapacity> caps = d.device().getCapacity();
    for (String name : r.capacityRequests().keySet()) {
      if (caps == null || !caps.containsKey(name)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether the device can take this request on top of {@code consumed} (existing shares plus
   * shares picked earlier in this search).
   */
  static boolean fits(RequestSpec r, CandidateDevice d, Map<String, Quantity> consumed) {
    if (requestsUnknownCapacity(r, d)) {
      return false;
    }
    Map<String, DeviceCapacity> caps = d.device().getCapacity();
    if (caps == null) {
      return true;
    }
    for (Map.Entry<String, DeviceCapacity> e : caps.entrySet()) {
      DeviceCapacity cap = e.getValue();
      Quantity use = consumption(r.capacityRequests().get(e.getKey()), cap);
      if (violatesPolicy(use, cap.getRequestPolicy())) {
        return false;
      }
      Quantity total = use.add(consumed.getOrDefault(e.getKey(), Quantity.ZERO));
      if (total.compareTo(Quantities.of(cap.getValue())) > 0) {
        return false;
      }
    }
    return true;
  }

  /** The consumption of every capacity of the device for this request. */
  static Map<String, Quantity> consumption(RequestSpec r, CandidateDevice d) {
    Map<String, Quantity> out = new HashMap<>();
    if (d.device().getCapacity() != null) {
      d.device()
          .getCapacity()
          .forEach((name, cap) -> out.put(name, consumption(r.capacityRequests().get(name), cap)));
    }
    return out;
  }

  static Quantity consumption(Quantity requested, DeviceCapacity cap) {
    CapacityRequestPolicy policy = cap.getRequestPolicy();
    if (requested == null) {
      if (policy != null && policy.getDefault() != null) {
        return Quantities.of(policy.getDefault());
      }
      return Quantities.of(cap.getValue());
    }
    if (policy == null) {
      return requested;
    }
    CapacityRequestPolicyRange range = policy.getValidRange();
    if (range != null && range.getMin() != null) {
      Quantity min = Quantities.of(range.getMin());
      if (requested.compareTo(min) < 0) {
        return min;
      }
      if (range.getStep() == null) {
        return requested;
      }
      Quantity step = Quantities.of(range.getStep());
      BigDecimal n =
          requested.value().subtract(min.value()).divide(step.value(), 0, RoundingMode.CEILING);
      return Quantity.of(min.value().add(n.multiply(step.value())), step.format());
    }
    if (policy.getValidValues() != null && !policy.getValidValues().isEmpty()) {
      for (io.fabric8.kubernetes.api.model.Quantity v : policy.getValidValues()) {
        Quantity valid = Quantities.of(v);
        if (requested.compareTo(valid) <= 0) {
          return valid;
        }
      }
    }
    return requested;
  }

  static boolean violatesPolicy(Quantity use, CapacityRequestPolicy policy) {
    if (policy == null) {
      return false;
    }
    if (policy.getDefault() != null && use.compareTo(Quantities.of(policy.getDefault())) == 0) {
      return false;
    }
    CapacityRequestPolicyRange range = policy.getValidRange();
    if (range != null) {
      if (range.getMax() != null && use.compareTo(Quantities.of(range.getMax())) > 0) {
        return true;
      }
      if (range.getStep() != null && range.getMin() != null) {
        BigDecimal span = use.value().subtract(Quantities.of(range.getMin()).value());
        BigDecimal rem = span.remainder(Quantities.of(range.getStep()).value());
        return rem.signum() != 0;
      }
      return false;
    }
    if (policy.getValidValues() != null && !policy.getValidValues().isEmpty()) {
      for (io.fabric8.kubernetes.api.model.Quantity v : policy.getValidValues()) {
        if (use.compareTo(Quantities.of(v)) == 0) {
          return false;
        }
      }
      return true;
    }
    return false;
  }
}
