package io.kdra.core.validation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.OpaqueDeviceConfiguration;
import io.kdra.core.cel.CelSelectorException;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/** Field checks shared by the validators, reporting with upstream's error types and wording. */
final class Checks {

  static final List<String> TAINT_EFFECTS = List.of("NoExecute", "NoSchedule", "None");
  static final List<String> TOLERATION_OPERATORS = List.of("Equal", "Exists");

  /** Upstream truncates long map keys in paths: domain + '/' + id is 96 at most. */
  private static final int KEY_TRUNCATE_LENGTH =
      Limits.DEVICE_MAX_DOMAIN_LENGTH + 1 + Limits.DEVICE_MAX_ID_LENGTH;

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Shared: the environment is thread-safe and caches compiled selectors. */
  private static final DeviceSelectorEnvironment SELECTORS = DeviceSelectorEnvironment.create();

  private Checks() {}

  static <T> List<T> list(List<T> list) {
    return list == null ? List.of() : list;
  }

  static <K, V> Map<K, V> map(Map<K, V> map) {
    return map == null ? Map.of() : map;
  }

  static boolean isEmpty(String s) {
    return s == null || s.isEmpty();
  }

  /** Required, then {@code messages} as Invalid: the shape of most of upstream's name checks. */
  static void requiredName(Errors e, FieldPath p, String value, List<String> messages) {
    if (isEmpty(value)) {
      e.required(p, "");
    } else {
      e.invalid(p, value, messages);
    }
  }

  /** Like upstream's ValidateCSIDriverName: Required, Too long, then the subdomain format. */
  static void driverName(Errors e, FieldPath p, String value) {
    if (isEmpty(value)) {
      e.required(p, "");
      return;
    }
    if (Names.bytes(value) > Limits.DRIVER_NAME_MAX_LENGTH) {
      e.tooLong(p, Limits.DRIVER_NAME_MAX_LENGTH);
    }
    e.invalid(p, value, Names.dns1123Subdomain(value.toLowerCase(Locale.ROOT)));
  }

  static void poolName(Errors e, FieldPath p, String value) {
    if (isEmpty(value)) {
      e.required(p, "");
      return;
    }
    if (Names.bytes(value) > Limits.POOL_NAME_MAX_LENGTH) {
      e.tooLong(p, Limits.POOL_NAME_MAX_LENGTH);
    }
    for (String part : value.split("/", -1)) {
      e.invalid(p, part, Names.dns1123Subdomain(part));
    }
  }

  /**
   * A map key that must be a qualified name. As upstream, key errors are reported on the map's own
   * path with the offending part as value.
   */
  static void qualifiedName(Errors e, FieldPath p, String key, boolean fullyQualified) {
    String k = key == null ? "" : key;
    String[] parts = k.split("/", -1);
    if (parts.length > 2) {
      e.invalid(p, k, "must not contain more than one slash");
    } else if (parts.length == 1) {
      cIdentifier(e, p, k);
    } else {
      if (parts[0].isEmpty()) {
        e.invalid(p, "", "the domain must not be empty");
      } else {
        driverName(e, p, parts[0]);
      }
      if (parts[1].isEmpty()) {
        e.invalid(p, "", "the name must not be empty");
      } else {
        cIdentifier(e, p, parts[1]);
      }
    }
    if (fullyQualified && !k.contains("/")) {
      e.invalid(p, k, "a fully qualified name must be a domain and a name separated by a slash");
    }
  }

  private static void cIdentifier(Errors e, FieldPath p, String id) {
    if (Names.bytes(id) > Limits.DEVICE_MAX_ID_LENGTH) {
      e.tooLong(p, Limits.DEVICE_MAX_ID_LENGTH);
    }
    if (!id.matches("[A-Za-z_][A-Za-z0-9_]*")) {
      e.invalid(p, id, Names.C_IDENTIFIER_ERROR);
    }
  }

  /** The path of a map entry; very long keys are shortened in the middle, as upstream does. */
  static FieldPath keyPath(FieldPath map, String key) {
    String k = key == null ? "" : key;
    if (k.length() <= KEY_TRUNCATE_LENGTH) {
      return map.key(k);
    }
    int remaining = KEY_TRUNCATE_LENGTH - 3;
    return map.key(
        k.substring(0, (remaining + 1) / 2) + "..." + k.substring(k.length() - remaining / 2));
  }

  static void selectors(Errors e, FieldPath p, List<DeviceSelector> selectors) {
    List<DeviceSelector> list = list(selectors);
    if (!e.withinLimit(p, list, Limits.DEVICE_SELECTORS_MAX_SIZE)) {
      return;
    }
    for (int i = 0; i < list.size(); i++) {
      FieldPath cel = p.index(i).child("cel");
      DeviceSelector selector = list.get(i);
      if (selector == null || selector.getCel() == null) {
        e.required(cel, "");
        continue;
      }
      String expression = selector.getCel().getExpression();
      if (isEmpty(expression)) {
        e.required(cel.child("expression"), "");
      } else if (Names.bytes(expression) > Limits.CEL_SELECTOR_EXPRESSION_MAX_LENGTH) {
        e.tooLong(cel.child("expression"), Limits.CEL_SELECTOR_EXPRESSION_MAX_LENGTH);
      } else {
        celExpression(e, cel, expression);
      }
    }
  }

  /** Compiles a new selector and checks its estimated cost, as API validation does. */
  private static void celExpression(Errors e, FieldPath cel, String expression) {
    SELECTORS
        .validate(expression)
        .ifPresent(
            problem -> {
              if (problem.kind() == CelSelectorException.Kind.COST_LIMIT) {
                e.forbidden(cel.child("expression"), "too complex, exceeds cost limit");
              } else {
                e.invalid(
                    cel.child("expression"),
                    expression,
                    "compilation failed: "
                        + problem
                            .position()
                            .map(pos -> "line " + pos.line() + ", column " + pos.column() + ": ")
                            .orElse("")
                        + problem.reason());
              }
            });
  }

  /** {@code opaque} of a claim or class config entry: a driver and a JSON object. */
  static void opaque(Errors e, FieldPath p, OpaqueDeviceConfiguration opaque) {
    FieldPath op = p.child("opaque");
    if (opaque == null) {
      e.required(op, "");
      return;
    }
    driverName(e, op.child("driver"), opaque.getDriver());
    parameters(
        e, op.child("parameters"), opaque.getParameters(), Limits.OPAQUE_PARAMETERS_MAX_LENGTH);
  }

  /**
   * Raw JSON as the API server receives it: checked on its serialized form, which must be a
   * non-null JSON object of at most {@code max} bytes.
   */
  static void parameters(Errors e, FieldPath p, Object parameters, int max) {
    if (parameters == null) {
      e.required(p, "");
      return;
    }
    byte[] raw;
    JsonNode node;
    try {
      raw = JSON.writeValueAsBytes(parameters);
      node = JSON.readTree(raw);
    } catch (IOException | RuntimeException ex) {
      e.invalid(p, "<value omitted>", "error parsing data as JSON: " + ex.getMessage());
      return;
    }
    if (raw.length > max) {
      e.tooLong(p, max);
    } else if (node == null || node.isNull()) {
      e.required(p, "");
    } else if (!node.isObject()) {
      e.invalid(p, "<value omitted>", "must be a valid JSON object");
    }
  }

  static void tolerations(Errors e, FieldPath p, List<DeviceToleration> tolerations) {
    List<DeviceToleration> list = list(tolerations);
    if (!e.withinLimit(p, list, Limits.DEVICE_TOLERATIONS_MAX_LENGTH)) {
      return;
    }
    for (int i = 0; i < list.size(); i++) {
      toleration(e, p.index(i), Objects.requireNonNullElseGet(list.get(i), DeviceToleration::new));
    }
  }

  /** An unset operator counts as {@code Equal}, the API server's default. */
  static void toleration(Errors e, FieldPath p, DeviceToleration t) {
    String key = t.getKey() == null ? "" : t.getKey();
    String value = t.getValue() == null ? "" : t.getValue();
    String operator = isEmpty(t.getOperator()) ? "Equal" : t.getOperator();
    if (!key.isEmpty()) {
      e.invalid(p.child("key"), key, Names.labelName(key));
    }
    switch (operator) {
      case "Exists" -> {
        if (!value.isEmpty()) {
          e.invalid(p.child("value"), value, "must be empty for operator `Exists`");
        }
      }
      case "Equal" -> {
        e.invalid(p.child("value"), value, Names.labelValue(value));
        if (key.isEmpty()) {
          e.invalid(
              p.child("operator"),
              operator,
              "must be `Exists` when `key` is empty, "
                  + "which means \"match all values and all keys\"");
        }
      }
      default -> e.notSupported(p.child("operator"), operator, TOLERATION_OPERATORS);
    }
    String effect = t.getEffect();
    if (!isEmpty(effect) && !TAINT_EFFECTS.contains(effect)) {
      e.notSupported(p.child("effect"), effect, TAINT_EFFECTS);
    }
  }

  /** metadata: a name or generateName; a name must be a DNS subdomain. */
  static void objectName(Errors e, ObjectMeta meta) {
    FieldPath p = FieldPath.root("metadata", "name");
    String name = meta == null ? null : meta.getName();
    if (isEmpty(name)) {
      if (meta == null || isEmpty(meta.getGenerateName())) {
        e.required(p, "name or generateName is required");
      }
      return;
    }
    e.invalid(p, name, Names.dns1123Subdomain(name));
  }

  /** A quantity in the API form; the text must parse as Kubernetes would parse it. */
  static void quantity(Errors e, FieldPath p, Quantity quantity) {
    if (quantity == null) {
      e.required(p, "");
      return;
    }
    String text =
        (quantity.getAmount() == null ? "" : quantity.getAmount())
            + (quantity.getFormat() == null ? "" : quantity.getFormat());
    try {
      io.kdra.core.model.Quantity.parse(text);
    } catch (IllegalArgumentException ex) {
      e.invalid(p, text, ex.getMessage());
    }
  }
}
