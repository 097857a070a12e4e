package io.kdra.claimcontroller.k8s;

import java.util.Map;

/** Operations of the JSON patches this controller writes. */
final class JsonPatchOps {

  private JsonPatchOps() {}

  /**
   * Sets the {@code resourceVersion} the patch was decided on: the API server then refuses it with
   * 409 if the object changed since, as it would an update (optimistic concurrency for a patch).
   */
  static Map<String, Object> onResourceVersion(String resourceVersion) {
    return Map.of("op", "replace", "path", "/metadata/resourceVersion", "value", resourceVersion);
  }
}
