package io.kdra.slicepublisher.admission;

import com.fasterxml.jackson.databind.JsonNode;
import io.kdra.core.config.OpaqueConfigDecoder;
import io.kdra.core.config.OpaqueConfigException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which opaque configs of a ResourceClaim, ResourceClaimTemplate or DeviceClass are our drivers',
 * and what the driver's decoder ({@link OpaqueConfigDecoder}, the rule it applies at prepare) says
 * of each: the first error of every such config, named by its path in the object, e.g. {@code
 * spec.devices.config[0].opaque.parameters.sharing.mps: not allowed with strategy Exclusive}. Other
 * drivers' configs and the requests themselves are not looked at.
 *
 * <p>The config lists sit at the same path in {@code resource.k8s.io} v1, v1beta2 and v1beta1, so
 * an object of any of those versions is read alike. Pure and thread-safe.
 */
public final class OpaqueConfigReview {

  /** Where each kind keeps its config list. */
  private static final Map<String, List<String>> CONFIG_PATHS =
      Map.of(
          "ResourceClaim", List.of("spec", "devices", "config"),
          "ResourceClaimTemplate", List.of("spec", "spec", "devices", "config"),
          "DeviceClass", List.of("spec", "config"));

  private final Set<String> drivers;

  /**
   * @param drivers the driver names whose configs are checked
   */
  public OpaqueConfigReview(Set<String> drivers) {
    this.drivers = Set.copyOf(drivers);
  }

  /** Whether objects of this kind carry configs that this review checks. */
  public static boolean reviews(String kind) {
    return CONFIG_PATHS.containsKey(kind);
  }

  /**
   * @param kind {@code ResourceClaim}, {@code ResourceClaimTemplate} or {@code DeviceClass}
   * @param object the object as JSON
   * @return the errors, in config order; empty when every config of ours decodes
   */
  public List<OpaqueConfigException> errors(String kind, JsonNode object) {
    List<String> path = CONFIG_PATHS.get(kind);
    if (path == null || object == null) {
      return List.of();
    }
    JsonNode configs = object;
    for (String field : path) {
      configs = configs.path(field);
    }
    if (!configs.isArray()) {
      return List.of();
    }
    String prefix = String.join(".", path);
    List<OpaqueConfigException> errors = new ArrayList<>();
    for (int i = 0; i < configs.size(); i++) {
      JsonNode opaque = configs.get(i).path("opaque");
      if (!opaque.isObject() || !drivers.contains(opaque.path("driver").asText(null))) {
        continue;
      }
      try {
        JsonNode parameters = opaque.get("parameters");
        OpaqueConfigDecoder.decode(
            parameters == null || parameters.isNull() ? null : parameters,
            prefix + "[" + i + "].opaque.parameters");
      } catch (OpaqueConfigException e) {
        errors.add(e);
      }
    }
    return errors;
  }
}
