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
 * Consumable capacity (KEP 5075) arithmetic, as upstream's {@code CmpRequestOverCapacity} (1.37): a
 * requested amount is rounded up by the capacity's {@code requestPolicy} (to {@code min}, to {@code
 * min + n*step}, or to the next valid value); an unrequested capacity consumes the policy default
 * or, without a policy, the whole value. A device fits when the rounded request obeys the policy
 * and what is already consumed plus the new consumption stays within the value.
 *
 * <p>Steps are counted as upstream counts them, in int64: in thousandths when {@code
 * DRAFractionalCapacityRange} is on and the range's {@code min}, {@code max} and {@code step} are
 * whole thousandths (a step of at least 1m), else in whole units, each quantity rounded up to one.
 * A request that this arithmetic cannot represent (not a whole thousandth on the milli path, past
 * int64 on the integer path, or rounding up past int64), and a negative consumption, are a {@link
 * CapacityException}: upstream aborts the allocation then instead of skipping the device.
 */
final class Capacity {

  private Capacity() {}

  /** The request cannot be represented in the range arithmetic, or consumes a negative amount. */
  static final class CapacityException extends RuntimeException {
    CapacityException(String message) {
      super(message, null, false, false);
    }
  }

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
   *
   * @throws CapacityException when a consumption cannot be computed (every capacity is computed
   *     before any is checked, so the outcome does not depend on the order of the capacities)
   */
  static boolean fits(
      RequestSpec r, CandidateDevice d, Map<String, Quantity> consumed, boolean fractional) {
    if (requestsUnknownCapacity(r, d)) {
      return false;
    }
    Map<String, DeviceCapacity> caps = d.device().getCapacity();
    if (caps == null) {
      return true;
    }
    Map<String, Quantity> use = consumption(r, d, fractional);
    for (Map.Entry<String, DeviceCapacity> e : caps.entrySet()) {
      DeviceCapacity cap = e.getValue();
      Quantity u = use.get(e.getKey());
      if (violatesPolicy(u, cap.getRequestPolicy(), fractional)) {
        return false;
      }
      Quantity total = u.add(consumed.getOrDefault(e.getKey(), Quantity.ZERO));
      if (total.compareTo(Quantities.of(cap.getValue())) > 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * The consumption of every capacity of the device for this request.
   *
   * @throws CapacityException when one cannot be computed
   */
  static Map<String, Quantity> consumption(RequestSpec r, CandidateDevice d, boolean fractional) {
    Map<String, Quantity> out = new HashMap<>();
    if (d.device().getCapacity() != null) {
      d.device()
          .getCapacity()
          .forEach(
              (name, cap) -> {
                Quantity use;
                try {
                  use = consumption(r.capacityRequests().get(name), cap, fractional);
                } catch (CapacityException e) {
                  throw new CapacityException("capacity \"" + name + "\": " + e.getMessage());
                }
                if (use.sign() < 0) {
                  throw new CapacityException(
                      "capacity \"" + name + "\": capacity value is negative");
                }
                out.put(name, use);
              });
    }
    return out;
  }

  static Quantity consumption(Quantity requested, DeviceCapacity cap, boolean fractional) {
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
      return roundUpToStep(requested, range, fractional);
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

  /** {@code min + n*step}, the smallest such value not below the request (at least min). */
  private static Quantity roundUpToStep(
      Quantity requested, CapacityRequestPolicyRange range, boolean fractional) {
    Quantity step = Quantities.of(range.getStep());
    boolean milli = useMilli(range, fractional);
    long req;
    if (milli) {
      Long m = exactMilli(requested);
      if (m == null) {
        throw notRepresentable("request " + requested + " is not a representable milli value");
      }
      req = m;
    } else {
      if (requested.value().compareTo(INT64_MAX) > 0) {
        throw notRepresentable("request " + requested + " exceeds MaxInt64");
      }
      req = roundedUp(requested);
    }
    long min = milli ? exactMilli(Quantities.of(range.getMin())) : roundedUp(range.getMin());
    long stepUnits = milli ? exactMilli(step) : roundedUp(range.getStep());
    long added = req - min;
    long n = added / stepUnits;
    if (added % stepUnits != 0) {
      n++;
    }
    // only with min >= 0 on the integer path (upstream's guard, which would overflow otherwise)
    if ((milli || min >= 0) && n > (Long.MAX_VALUE - min) / stepUnits) {
      throw notRepresentable(
          "rounding request "
              + requested
              + " up to the next step passes "
              + (milli ? "the milli-value range" : "MaxInt64"));
    }
    long result = min + stepUnits * n;
    BigDecimal value =
        milli ? BigDecimal.valueOf(result).movePointLeft(3) : BigDecimal.valueOf(result);
    return Quantity.of(value, step.format());
  }

  static boolean violatesPolicy(Quantity use, CapacityRequestPolicy policy, boolean fractional) {
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
        long used;
        long min;
        long step;
        if (useMilli(range, fractional)) {
          Long m = exactMilli(use);
          if (m == null) {
            return true;
          }
          used = m;
          min = exactMilli(Quantities.of(range.getMin()));
          step = exactMilli(Quantities.of(range.getStep()));
        } else {
          used = roundedUp(use);
          min = roundedUp(range.getMin());
          step = roundedUp(range.getStep());
        }
        return (used - min) % step != 0;
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

  private static final BigDecimal INT64_MAX = BigDecimal.valueOf(Long.MAX_VALUE);
  private static final BigDecimal INT64_MIN = BigDecimal.valueOf(Long.MIN_VALUE);

  /**
   * Upstream's {@code useMilli}: the gate is on and every bound of the range is a whole number of
   * thousandths within int64, the step at least 1m.
   */
  static boolean useMilli(CapacityRequestPolicyRange range, boolean fractional) {
    if (!fractional) {
      return false;
    }
    for (io.fabric8.kubernetes.api.model.Quantity q :
        new io.fabric8.kubernetes.api.model.Quantity[] {
          range.getMin(), range.getMax(), range.getStep()
        }) {
      if (q != null && exactMilli(Quantities.of(q)) == null) {
        return false;
      }
    }
    return range.getStep() == null || exactMilli(Quantities.of(range.getStep())) >= 1;
  }

  /** The value in thousandths when that is exact and fits int64 (upstream's safeMilliValue). */
  static Long exactMilli(Quantity q) {
    BigDecimal milli = q.value().movePointRight(3);
    if (milli.signum() != 0 && milli.stripTrailingZeros().scale() > 0) {
      return null;
    }
    if (milli.compareTo(INT64_MAX) > 0 || milli.compareTo(INT64_MIN) < 0) {
      return null;
    }
    return milli.longValueExact();
  }

  /** Go's {@code Quantity.Value()}: rounded away from zero to a whole number. */
  private static long roundedUp(io.fabric8.kubernetes.api.model.Quantity q) {
    return roundedUp(Quantities.of(q));
  }

  private static long roundedUp(Quantity q) {
    BigDecimal whole = q.value().setScale(0, RoundingMode.UP);
    if (whole.compareTo(INT64_MAX) > 0 || whole.compareTo(INT64_MIN) < 0) {
      throw notRepresentable(q + " exceeds the int64 range");
    }
    return whole.longValueExact();
  }

  private static CapacityException notRepresentable(String why) {
    return new CapacityException(
        "capacity request cannot be represented in the device's range arithmetic: " + why);
  }
}
