package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.cel.CelDevice;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import io.kdra.core.model.NewerFields;
import io.kdra.core.testing.CheckedWorld.Entry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/**
 * The constraint rules of a claim: {@code matchAttribute} and {@code distinctAttribute}, over the
 * devices' attributes or, for a request that derives the attribute (1.37 alpha {@code
 * derivedAttributes}), the value its expression gives for the device (dra-core's CEL, pinned to
 * upstream's by its own tests). A derived list matches no other value, as upstream's scalar
 * comparison has it.
 */
final class ConstraintRules {

  private static final DeviceSelectorEnvironment CEL = DeviceSelectorEnvironment.create(true);

  private ConstraintRules() {}

  /** Every matchAttribute and distinctAttribute constraint holds over the devices it names. */
  static void check(
      ResourceClaim c, String claim, Map<String, List<Entry>> byRequest, List<String> out) {
    List<DeviceConstraint> constraints = c.getSpec().getDevices().getConstraints();
    if (constraints == null) {
      return;
    }
    for (DeviceConstraint k : constraints) {
      List<String> names = k.getRequests() == null ? List.of() : k.getRequests();
      String attr =
          k.getMatchAttribute() != null ? k.getMatchAttribute() : k.getDistinctAttribute();
      if (attr == null) {
        continue;
      }
      List<Object> values = new ArrayList<>();
      List<String> ids = new ArrayList<>();
      byRequest.forEach(
          (request, entries) -> {
            String top = request.split("/", 2)[0];
            if (!names.isEmpty() && !names.contains(top) && !names.contains(request)) {
              return;
            }
            String expression = derived(c, request).get(attr);
            for (Entry e : entries) {
              values.add(expression == null ? attribute(e, attr) : derivedValue(e, expression));
              ids.add(e.id());
            }
          });
      if (values.contains(null)) {
        out.add(
            claim
                + ": constraint on "
                + attr
                + ": device "
                + ids.get(values.indexOf(null))
                + " lacks the attribute");
        continue;
      }
      if (values.stream().anyMatch(v -> v.toString().startsWith("error:"))) {
        out.add(claim + ": constraint on " + attr + ": derived value fails: " + values);
        continue;
      }
      boolean list = values.stream().anyMatch(v -> v.toString().startsWith("list:"));
      if (k.getMatchAttribute() != null
          && (new HashSet<>(values).size() > 1 || (list && values.size() > 1))) {
        out.add(claim + ": matchAttribute " + attr + " violated by " + ids + ": " + values);
      }
      if (k.getDistinctAttribute() != null && new HashSet<>(values).size() < values.size()) {
        out.add(claim + ": distinctAttribute " + attr + " violated by " + ids + ": " + values);
      }
    }
  }

  /** The derived attributes of a request ({@code r} or {@code r/s}): expressions by name. */
  private static Map<String, String> derived(ResourceClaim c, String request) {
    String[] parts = request.split("/", 2);
    Map<String, String> out = new java.util.HashMap<>();
    for (DeviceRequest r : c.getSpec().getDevices().getRequests()) {
      if (!r.getName().equals(parts[0])) {
        continue;
      }
      List<NewerFields.DerivedAttribute> attrs = List.of();
      if (parts.length == 1 && r.getExactly() != null) {
        attrs = NewerFields.derivedAttributes(r.getExactly());
      }
      for (DeviceSubRequest sub : r.getFirstAvailable()) {
        if (parts.length == 2 && sub.getName().equals(parts[1])) {
          attrs = NewerFields.derivedAttributes(sub);
        }
      }
      attrs.forEach(a -> out.put(a.name(), a.expression()));
    }
    return out;
  }

  /** The expression's value for the device, typed as {@link #attribute} writes it. */
  private static Object derivedValue(Entry e, String expression) {
    try {
      Object v = CEL.compileDerived(expression).value(CelDevice.of(e.driver(), e.device()));
      if (v instanceof List<?> l) {
        return "list:" + l;
      }
      String type =
          v instanceof Long
              ? "int"
              : v instanceof Boolean ? "bool" : v instanceof String ? "string" : "version";
      return type + ":" + v;
    } catch (RuntimeException ex) {
      return "error:" + ex.getMessage();
    }
  }

  /** The attribute's typed value (as a comparable string), exact key or bare id of the driver. */
  private static Object attribute(Entry e, String qualified) {
    Map<String, DeviceAttribute> attrs = e.device().getAttributes();
    if (attrs == null) {
      return null;
    }
    DeviceAttribute a = attrs.get(qualified);
    int slash = qualified.indexOf('/');
    if (a == null && slash > 0 && qualified.substring(0, slash).equals(e.driver())) {
      a = attrs.get(qualified.substring(slash + 1));
    }
    if (a == null) {
      return null;
    }
    if (a.getInt() != null) {
      return "int:" + a.getInt();
    }
    if (a.getBool() != null) {
      return "bool:" + a.getBool();
    }
    if (a.getString() != null) {
      return "string:" + a.getString();
    }
    if (a.getVersion() != null) {
      return "version:" + a.getVersion();
    }
    return null;
  }
}
