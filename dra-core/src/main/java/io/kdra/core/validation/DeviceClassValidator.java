package io.kdra.core.validation;

import static io.kdra.core.validation.Checks.list;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassSpec;
import io.kdra.core.validation.ValidationError.ObjectRef;
import java.util.List;

/**
 * Validates a {@code DeviceClass} as the API server does on create: at most 32 selectors, each with
 * a CEL expression of at most 10 Ki, and at most 32 opaque config entries.
 *
 * <p>Not checked: CEL compilation and cost, {@code extendedResourceName}.
 */
public final class DeviceClassValidator {

  private DeviceClassValidator() {}

  /** All problems of the class; empty when the API server would accept it. */
  public static List<ValidationError> validate(DeviceClass deviceClass) {
    String name = deviceClass.getMetadata() == null ? "" : deviceClass.getMetadata().getName();
    Errors e = new Errors(new ObjectRef("DeviceClass", "", name));
    Checks.objectName(e, deviceClass.getMetadata());
    DeviceClassSpec spec =
        deviceClass.getSpec() == null ? new DeviceClassSpec() : deviceClass.getSpec();
    FieldPath p = FieldPath.root("spec");
    Checks.selectors(e, p.child("selectors"), spec.getSelectors());
    List<DeviceClassConfiguration> config = list(spec.getConfig());
    FieldPath cp = p.child("config");
    if (e.withinLimit(cp, config, Limits.DEVICE_CONFIG_MAX_SIZE)) {
      for (int i = 0; i < config.size(); i++) {
        Checks.opaque(e, cp.index(i), config.get(i) == null ? null : config.get(i).getOpaque());
      }
    }
    return e.list();
  }
}
