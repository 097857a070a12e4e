package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.kdra.core.model.AttributeValue;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A claim-level constraint tracked during the search. Every successful {@link #add} is undone by
 * exactly one {@link #remove} with the same arguments, in reverse order. Constraints are monotonic:
 * once a device is rejected, adding more devices never makes it acceptable.
 */
abstract sealed class Constraint permits Constraint.MatchAttribute, Constraint.DistinctAttribute {

  private final Set<String> requests;
  final String attribute;

  Constraint(List<String> requests, String attribute) {
    this.requests = requests == null ? Set.of() : Set.copyOf(requests);
    this.attribute = attribute;
  }

  /** Builds the constraint, or returns null for an unknown (empty) constraint type. */
  static Constraint of(DeviceConstraint c) {
    if (c.getMatchAttribute() != null && !c.getMatchAttribute().isEmpty()) {
      return new MatchAttribute(c.getRequests(), c.getMatchAttribute());
    }
    if (c.getDistinctAttribute() != null && !c.getDistinctAttribute().isEmpty()) {
      return new DistinctAttribute(c.getRequests(), c.getDistinctAttribute());
    }
    return null;
  }

  /** Whether the constraint covers devices of this request (empty list = all requests). */
  final boolean applies(RequestSpec r) {
    if (requests.isEmpty()) {
      return true;
    }
    return requests.contains(r.baseName())
        || (r.parent() != null && requests.contains(r.resultName()));
  }

  /** Where a constraint reads a device's value for a request (derived attributes differ). */
  @FunctionalInterface
  interface Values {
    /** An {@link AttributeValue}, a {@link ListValue}, or null when the device has none. */
    Object of(RequestSpec r, CandidateDevice d, String attribute);
  }

  /**
   * A list a derived attribute evaluated to. Without list-type attributes (off, as in 1.37)
   * upstream compares scalars only: a list equals nothing, so a {@code matchAttribute} takes it
   * only as its first value, and a {@code distinctAttribute} only while it has no other value.
   */
  record ListValue(List<Object> elements) {}

  /** A derived expression's result as a constraint compares it. */
  static Object fromCel(Object v) {
    if (v instanceof Long l) {
      return new AttributeValue.IntValue(l);
    }
    if (v instanceof Boolean b) {
      return new AttributeValue.BoolValue(b);
    }
    if (v instanceof String s) {
      return new AttributeValue.StringValue(s);
    }
    if (v instanceof io.kdra.core.model.Semver sv) {
      return new AttributeValue.VersionValue(sv);
    }
    if (v instanceof List<?> list) {
      return new ListValue(List.copyOf(list));
    }
    throw new IllegalArgumentException("not an attribute value: " + v);
  }

  /** Tries to add the device; false when it would violate the constraint. */
  final boolean add(RequestSpec r, CandidateDevice d, Values values) {
    if (!applies(r)) {
      return true;
    }
    Object v = values.of(r, d, attribute);
    if (v == null) {
      return false;
    }
    return accept(v);
  }

  final void remove(RequestSpec r, CandidateDevice d) {
    if (applies(r)) {
      drop();
    }
  }

  abstract boolean accept(Object v);

  abstract void drop();

  /** How the constraint reads in explanations. */
  abstract String describe();

  String requestsText() {
    return requests.isEmpty()
        ? "all requests"
        : "requests " + String.join(", ", requests.stream().sorted().toList());
  }

  /** All devices share the attribute's type and value (the first device fixes it). */
  static final class MatchAttribute extends Constraint {
    private Object value;
    private int count;

    MatchAttribute(List<String> requests, String attribute) {
      super(requests, attribute);
    }

    @Override
    boolean accept(Object v) {
      if (count == 0) {
        value = v;
      } else if (value instanceof ListValue || v instanceof ListValue || !value.equals(v)) {
        return false;
      }
      count++;
      return true;
    }

    @Override
    void drop() {
      count--;
      if (count == 0) {
        value = null;
      }
    }

    @Override
    String describe() {
      return "matchAttribute " + attribute + " (" + requestsText() + ")";
    }
  }

  /** All devices have the attribute with pairwise different values (compared by value). */
  static final class DistinctAttribute extends Constraint {
    private final List<Object> values = new ArrayList<>();

    DistinctAttribute(List<String> requests, String attribute) {
      super(requests, attribute);
    }

    @Override
    boolean accept(Object v) {
      if (v instanceof ListValue ? !values.isEmpty() : values.contains(v)) {
        return false;
      }
      values.add(v);
      return true;
    }

    @Override
    void drop() {
      values.remove(values.size() - 1);
    }

    @Override
    String describe() {
      return "distinctAttribute " + attribute + " (" + requestsText() + ")";
    }
  }
}
