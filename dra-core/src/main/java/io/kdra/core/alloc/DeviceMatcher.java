package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import java.util.List;

/**
 * Whether a device is selectable for a request: visible (binding conditions need their feature;
 * per-device node selection must match the node), class selectors, then request selectors. Results
 * are cached per device and expression. Selector failures become {@link AllocationProblem}s that
 * name the expression, the class or claim, and the device.
 */
final class DeviceMatcher {

  private final SelectorEvaluator evaluator;
  private final AllocatorFeatures features;
  private final Node node;
  private final boolean useCache;
  private final java.util.Map<DerivedKey, Object> derivedValues = new java.util.HashMap<>();

  /** A derived expression on a device: evaluated once, whichever attribute names it. */
  private record DerivedKey(io.kdra.core.model.DeviceId device, String expression) {}

  /**
   * @param useCache whether the devices' result caches belong to this evaluator (see {@link
   *     DeviceInventory#cachesResultsOf}); without it every selector is evaluated
   */
  DeviceMatcher(
      SelectorEvaluator evaluator, AllocatorFeatures features, Node node, boolean useCache) {
    this.evaluator = evaluator;
    this.features = features;
    this.node = node;
    this.useCache = useCache;
  }

  Node node() {
    return node;
  }

  /** Visible from the node and not hidden by a disabled feature. */
  boolean visible(CandidateDevice d) {
    if (!features.bindingConditions() && d.hasBindingConditions()) {
      return false;
    }
    return !d.slice().perDeviceNodeSelection() || PoolGatherer.deviceVisible(d, node);
  }

  boolean classMatches(int claimIndex, RequestData rd, CandidateDevice d) {
    DeviceClass cls = rd.deviceClass();
    if (cls.getSpec() == null || cls.getSpec().getSelectors() == null) {
      return true;
    }
    List<DeviceSelector> selectors = cls.getSpec().getSelectors();
    for (int i = 0; i < selectors.size(); i++) {
      DeviceSelector s = selectors.get(i);
      if (s.getCel() == null || s.getCel().getExpression() == null) {
        throw new AllocationProblem(
            claimIndex,
            rd.spec().resultName(),
            Explanation.Kind.FATAL,
            "class "
                + cls.getMetadata().getName()
                + ": selector #"
                + i
                + ": CEL expression empty (unsupported selector type?)",
            null);
      }
      if (!eval(
          claimIndex,
          rd,
          d,
          s.getCel().getExpression(),
          "class " + cls.getMetadata().getName() + ": selector #" + i)) {
        return false;
      }
    }
    return true;
  }

  boolean requestMatches(int claimIndex, RequestData rd, CandidateDevice d) {
    return requestSelectorsMatch(claimIndex, rd, d) && capacityKnown(rd, d);
  }

  /** The request's CEL selectors, in order. */
  boolean requestSelectorsMatch(int claimIndex, RequestData rd, CandidateDevice d) {
    List<String> exprs = rd.spec().selectors();
    for (int i = 0; i < exprs.size(); i++) {
      if (!eval(
          claimIndex,
          rd,
          d,
          exprs.get(i),
          "request " + rd.spec().resultName() + ": selector #" + i)) {
        return false;
      }
    }
    return true;
  }

  /** With consumable capacity: the device has every capacity the request asks for. */
  boolean capacityKnown(RequestData rd, CandidateDevice d) {
    return !(features.consumableCapacity() && Capacity.requestsUnknownCapacity(rd.spec(), d));
  }

  boolean selectable(int claimIndex, RequestData rd, CandidateDevice d) {
    return visible(d) && classMatches(claimIndex, rd, d) && requestMatches(claimIndex, rd, d);
  }

  /**
   * The value of {@code attribute} for a constraint: the request's derived attribute of that name
   * when it has one (evaluated against the device; it shadows the device's own), else the device's
   * attribute; null when neither exists. A derived value is an {@link
   * io.kdra.core.model.AttributeValue} or, for a list result, a {@link Constraint.ListValue}. As
   * upstream, a failing expression fails the allocation.
   */
  Object constraintValue(int claimIndex, RequestSpec spec, CandidateDevice d, String attribute) {
    String expression = spec.derivedAttributes().get(attribute);
    if (expression == null) {
      return d.attribute(attribute);
    }
    DerivedKey key = new DerivedKey(d.id(), expression);
    Object cached = derivedValues.get(key);
    if (cached != null) {
      return cached;
    }
    Object value;
    try {
      value = Constraint.fromCel(evaluator.derivedValue(expression, d));
    } catch (SelectorException e) {
      throw new AllocationProblem(
          claimIndex,
          spec.resultName(),
          Explanation.Kind.FATAL,
          "derived attribute "
              + attribute
              + " on device "
              + d.id()
              + ": CEL error: "
              + e.getMessage(),
          expression);
    }
    derivedValues.put(key, value);
    return value;
  }

  private boolean eval(
      int claimIndex, RequestData rd, CandidateDevice d, String expression, String where) {
    Boolean cached = useCache ? d.cachedMatch(expression) : null;
    if (cached != null) {
      return cached;
    }
    boolean result;
    try {
      result = evaluator.matches(expression, d);
    } catch (SelectorException e) {
      throw new AllocationProblem(
          claimIndex,
          rd.spec().resultName(),
          Explanation.Kind.FATAL,
          where + " on device " + d.id() + ": CEL error: " + e.getMessage(),
          expression);
    }
    if (useCache) {
      d.cacheMatch(expression, result);
    }
    return result;
  }
}
