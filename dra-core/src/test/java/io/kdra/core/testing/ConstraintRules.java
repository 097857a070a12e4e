package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.testing.CheckedWorld.Entry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/** The constraint rules of a claim: {@code matchAttribute} and {@code distinctAttribute}. */
final class ConstraintRules {

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
            for (Entry e : entries) {
              values.add(attribute(e, attr));
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
      if (k.getMatchAttribute() != null && new HashSet<>(values).size() > 1) {
        out.add(claim + ": matchAttribute " + attr + " violated by " + ids + ": " + values);
      }
      if (k.getDistinctAttribute() != null && new HashSet<>(values).size() < values.size()) {
        out.add(claim + ": distinctAttribute " + attr + " violated by " + ids + ": " + values);
      }
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
