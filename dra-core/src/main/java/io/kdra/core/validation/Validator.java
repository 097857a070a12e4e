package io.kdra.core.validation;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.List;

/**
 * One entry point for the {@code resource.k8s.io/v1} kinds: dispatches to {@link
 * ResourceSliceValidator}, {@link ResourceClaimValidator} or {@link DeviceClassValidator}.
 */
public final class Validator {

  private Validator() {}

  /**
   * All problems of the object; empty when valid.
   *
   * @throws IllegalArgumentException for a kind this package does not validate
   */
  public static List<ValidationError> validate(HasMetadata object) {
    if (object instanceof ResourceSlice slice) {
      return ResourceSliceValidator.validate(slice);
    }
    if (object instanceof ResourceClaim claim) {
      return ResourceClaimValidator.validate(claim);
    }
    if (object instanceof ResourceClaimTemplate template) {
      return ResourceClaimValidator.validate(template);
    }
    if (object instanceof DeviceClass deviceClass) {
      return DeviceClassValidator.validate(deviceClass);
    }
    throw new IllegalArgumentException(
        "no validation for kind " + (object == null ? "null" : object.getClass().getSimpleName()));
  }
}
