package io.kdra.core.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kdra.core.cel.golang.GoQuote;
import io.kdra.core.model.Quantity;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Decodes this driver's opaque device configuration, strictly: an unknown apiVersion, kind or field
 * is an error naming it, because a typo silently ignored would hand out an exclusive GPU where the
 * user asked for a shared one (or the reverse).
 *
 * <pre>
 * apiVersion: resource.kdra.io/v1alpha1
 * kind: GpuConfig
 * sharing:
 *   strategy: Exclusive | TimeSlicing | MPS     # default Exclusive
 *   timeSlicing: {interval: Default | Short | Medium | Long}   # only with TimeSlicing
 *   mps: {activeThreadPercentage: 1..100, pinnedMemoryLimit: 10Gi}   # only with MPS
 * </pre>
 *
 * <p>The device-driver decodes with it at prepare, and the slice-publisher's admission webhook when
 * a claim, template or class is written. The chart's ValidatingAdmissionPolicy ({@code
 * helm/kdra/templates/admission/}) refuses the same configs in CEL: a rule changed here must change
 * there too, with a case in {@code OpaqueConfigAdmissionIT}, which runs each case through both.
 *
 * <p>Pure and thread-safe.
 */
public final class OpaqueConfigDecoder {
  /** The one API version of the config kind so far. */
  public static final String API_VERSION = "resource.kdra.io/v1alpha1";

  /** The config kind for GPUs. */
  public static final String KIND = "GpuConfig";

  private static final ObjectMapper JSON = new ObjectMapper();

  private OpaqueConfigDecoder() {}

  /**
   * @param parameters the {@code opaque.parameters} object as the Kubernetes client decoded it
   * @param path the JSON path of {@code parameters}, used in messages
   * @throws OpaqueConfigException naming the first offending field
   */
  public static SharingConfig decode(Object parameters, String path) throws OpaqueConfigException {
    if (parameters == null) {
      throw new OpaqueConfigException(path, "is required");
    }
    JsonNode root = JSON.valueToTree(parameters);
    requireObject(root, path);
    allowOnly(root, path, Set.of("apiVersion", "kind", "sharing"));
    String apiVersion = text(root, "apiVersion", path);
    if (!API_VERSION.equals(apiVersion)) {
      throw new OpaqueConfigException(
          path + ".apiVersion", quote(apiVersion) + " is not supported, use " + API_VERSION);
    }
    String kind = text(root, "kind", path);
    if (!KIND.equals(kind)) {
      throw new OpaqueConfigException(
          path + ".kind", quote(kind) + " is not supported, use " + KIND);
    }
    JsonNode sharing = root.get("sharing");
    if (sharing == null || sharing.isNull()) {
      return SharingConfig.EXCLUSIVE;
    }
    return sharing(sharing, path + ".sharing");
  }

  private static SharingConfig sharing(JsonNode node, String path) throws OpaqueConfigException {
    requireObject(node, path);
    allowOnly(node, path, Set.of("strategy", "timeSlicing", "mps"));
    String strategy = node.has("strategy") ? text(node, "strategy", path) : "Exclusive";
    switch (strategy) {
      case "Exclusive" -> {
        forbid(node, "timeSlicing", path, strategy);
        forbid(node, "mps", path, strategy);
        return SharingConfig.EXCLUSIVE;
      }
      case "TimeSlicing" -> {
        forbid(node, "mps", path, strategy);
        return timeSlicing(node.get("timeSlicing"), path + ".timeSlicing");
      }
      case "MPS" -> {
        forbid(node, "timeSlicing", path, strategy);
        return mps(node.get("mps"), path + ".mps");
      }
      default ->
          throw new OpaqueConfigException(
              path + ".strategy", quote(strategy) + " is not one of Exclusive, TimeSlicing, MPS");
    }
  }

  private static SharingConfig timeSlicing(JsonNode node, String path)
      throws OpaqueConfigException {
    if (node == null || node.isNull()) {
      return new SharingConfig.TimeSlicing(SharingConfig.Interval.Default);
    }
    requireObject(node, path);
    allowOnly(node, path, Set.of("interval"));
    if (!node.has("interval")) {
      return new SharingConfig.TimeSlicing(SharingConfig.Interval.Default);
    }
    String interval = text(node, "interval", path);
    for (SharingConfig.Interval i : SharingConfig.Interval.values()) {
      if (i.name().equals(interval)) {
        return new SharingConfig.TimeSlicing(i);
      }
    }
    throw new OpaqueConfigException(
        path + ".interval", quote(interval) + " is not one of Default, Short, Medium, Long");
  }

  private static SharingConfig mps(JsonNode node, String path) throws OpaqueConfigException {
    if (node == null || node.isNull()) {
      return new SharingConfig.Mps(100, Optional.empty());
    }
    requireObject(node, path);
    allowOnly(node, path, Set.of("activeThreadPercentage", "pinnedMemoryLimit"));
    int percentage = 100;
    JsonNode p = node.get("activeThreadPercentage");
    if (p != null) {
      if (!p.isIntegralNumber() || p.asLong() < 1 || p.asLong() > 100) {
        throw new OpaqueConfigException(
            path + ".activeThreadPercentage", "must be an integer from 1 to 100, got " + p);
      }
      percentage = p.asInt();
    }
    Optional<Quantity> pinned = Optional.empty();
    if (node.has("pinnedMemoryLimit")) {
      String text = text(node, "pinnedMemoryLimit", path);
      Quantity q;
      try {
        q = Quantity.parse(text);
      } catch (IllegalArgumentException e) {
        throw new OpaqueConfigException(
            path + ".pinnedMemoryLimit", quote(text) + " is not a quantity (e.g. 10Gi)");
      }
      if (q.sign() <= 0) {
        throw new OpaqueConfigException(
            path + ".pinnedMemoryLimit", "must be positive, got " + text);
      }
      pinned = Optional.of(q);
    }
    return new SharingConfig.Mps(percentage, pinned);
  }

  private static void requireObject(JsonNode node, String path) throws OpaqueConfigException {
    if (!node.isObject()) {
      throw new OpaqueConfigException(path, "must be an object, got " + node.getNodeType());
    }
  }

  private static void allowOnly(JsonNode node, String path, Set<String> known)
      throws OpaqueConfigException {
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      String field = it.next().getKey();
      if (!known.contains(field)) {
        throw new OpaqueConfigException(path + "." + field, "unknown field");
      }
    }
  }

  private static void forbid(JsonNode node, String field, String path, String strategy)
      throws OpaqueConfigException {
    if (node.has(field)) {
      throw new OpaqueConfigException(path + "." + field, "not allowed with strategy " + strategy);
    }
  }

  private static String text(JsonNode node, String field, String path)
      throws OpaqueConfigException {
    JsonNode v = node.get(field);
    if (v == null || v.isNull()) {
      throw new OpaqueConfigException(path + "." + field, "is required");
    }
    if (!v.isTextual()) {
      throw new OpaqueConfigException(path + "." + field, "must be a string, got " + v);
    }
    return v.asText();
  }

  private static String quote(String s) {
    return GoQuote.string(s);
  }
}
