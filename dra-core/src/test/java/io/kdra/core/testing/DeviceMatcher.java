package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.kdra.core.cel.CelDevice;
import io.kdra.core.cel.CelSelectorException;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import io.kdra.core.testing.CheckedWorld.Entry;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The device rules of a request: its class's and its own CEL selectors (with dra-core's CEL
 * environment, which its own tests pin to upstream's), and the device's taints against its
 * tolerations.
 */
final class DeviceMatcher {

  private final CheckedWorld world;
  private final DeviceSelectorEnvironment cel = DeviceSelectorEnvironment.create(true);

  DeviceMatcher(CheckedWorld world) {
    this.world = world;
  }

  /** Null when the device satisfies the class's and the request's selectors, else why not. */
  String matches(RequestSpec spec, Entry e) {
    DeviceClass cls = world.classes.get(spec.className());
    if (cls == null) {
      return "is of class " + spec.className() + ", which does not exist";
    }
    List<DeviceSelector> all = new ArrayList<>();
    if (cls.getSpec() != null && cls.getSpec().getSelectors() != null) {
      all.addAll(cls.getSpec().getSelectors());
    }
    if (spec.selectors() != null) {
      all.addAll(spec.selectors());
    }
    CelDevice view;
    try {
      view = CelDevice.of(e.driver(), e.device());
    } catch (IllegalArgumentException ex) {
      return "cannot be evaluated: " + ex.getMessage();
    }
    for (DeviceSelector s : all) {
      if (s.getCel() == null) {
        continue;
      }
      try {
        if (!cel.compile(s.getCel().getExpression()).matches(view)) {
          return "does not match selector " + s.getCel().getExpression();
        }
      } catch (CelSelectorException ex) {
        return "fails selector " + s.getCel().getExpression() + ": " + ex.getMessage();
      }
    }
    return null;
  }

  /** The first NoSchedule/NoExecute taint no toleration matches, as text; null when none. */
  static String untolerated(Device d, List<DeviceToleration> tolerations) {
    if (d.getTaints() == null) {
      return null;
    }
    for (DeviceTaint t : d.getTaints()) {
      if (!"NoSchedule".equals(t.getEffect()) && !"NoExecute".equals(t.getEffect())) {
        continue;
      }
      boolean ok = false;
      for (DeviceToleration tol : tolerations == null ? List.<DeviceToleration>of() : tolerations) {
        boolean effect =
            tol.getEffect() == null
                || tol.getEffect().isEmpty()
                || tol.getEffect().equals(t.getEffect());
        boolean key =
            tol.getKey() == null || tol.getKey().isEmpty() || tol.getKey().equals(t.getKey());
        boolean value =
            "Exists".equals(tol.getOperator())
                || Objects.equals(
                    Objects.requireNonNullElse(tol.getValue(), ""),
                    Objects.requireNonNullElse(t.getValue(), ""));
        ok |= effect && key && value;
      }
      if (!ok) {
        return t.getKey() + "=" + t.getValue() + ":" + t.getEffect();
      }
    }
    return null;
  }
}
