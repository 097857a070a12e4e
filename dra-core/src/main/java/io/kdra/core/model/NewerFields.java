package io.kdra.core.model;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Kubernetes 1.37 fields of {@code resource.k8s.io/v1} that fabric8 7.5.2's model lacks (all
 * alpha, each behind its own feature gate), and the node's {@code status.declaredFeatures} (1.35,
 * {@code NodeDeclaredFeatures}) that one of them depends on: fabric8 keeps them in {@code
 * additionalProperties}, as the API server wrote them; these read (and, for tests and generators,
 * write) them there. Each reader returns "not set" for a missing or malformed value: the API server
 * validates these fields, so malformed input only comes from hand-written files. {@code
 * NewerFieldsTest} fails once fabric8 models a field; then read it from fabric8 and remove it here.
 */
public final class NewerFields {

  private NewerFields() {}

  /**
   * A virtual attribute of a request ({@code DRADerivedAttributes}), computed per candidate device
   * by a CEL expression and used by {@code matchAttribute} and {@code distinctAttribute}.
   */
  public record DerivedAttribute(String name, String expression) {}

  /**
   * How a device counts against a node resource ({@code DRANodeAllocatableResources}); either part
   * may be null.
   */
  public record NodeAllocatableResource(Mapping mapping, Overhead overhead) {}

  /** The device models the node resource: per consumed capacity or per device; nulls when unset. */
  public record Mapping(
      String capacityKey, Quantity capacityMultiplier, Quantity deviceMultiplier) {}

  /** Extra node resource per pod and per container that uses the device; nulls when unset. */
  public record Overhead(Quantity perPod, Quantity perContainer) {}

  static final String COMPATIBILITY_GROUPS = "compatibilityGroups";
  static final String DERIVED_ATTRIBUTES = "derivedAttributes";
  static final String PARTITION_TYPE_ATTRIBUTE = "partitionTypeAttribute";
  static final String NODE_ALLOCATABLE_RESOURCES = "nodeAllocatableResources";
  static final String SKIP_NODE_OPERATIONS = "skipNodeOperations";
  static final String DECLARED_FEATURES = "declaredFeatures";

  /**
   * {@code DRAOptionalNodeOperations}: the node operations (kubelet gRPC calls) the devices of a
   * slice need not have: {@code NodePrepareResources}, {@code NodeUnprepareResources} or {@code *};
   * empty when none. Values are kept as written (the kubelet ignores unknown ones).
   */
  public static List<String> skipNodeOperations(ResourceSliceSpec spec) {
    return strings(spec.getAdditionalProperties().get(SKIP_NODE_OPERATIONS));
  }

  public static void setSkipNodeOperations(ResourceSliceSpec spec, List<String> operations) {
    put(
        spec.getAdditionalProperties(),
        SKIP_NODE_OPERATIONS,
        operations.isEmpty() ? null : List.copyOf(operations));
  }

  /** The copy of the slice's {@code skipNodeOperations} an allocation result carries. */
  public static List<String> skipNodeOperations(DeviceRequestAllocationResult result) {
    return strings(result.getAdditionalProperties().get(SKIP_NODE_OPERATIONS));
  }

  public static void setSkipNodeOperations(
      DeviceRequestAllocationResult result, List<String> operations) {
    put(
        result.getAdditionalProperties(),
        SKIP_NODE_OPERATIONS,
        operations.isEmpty() ? null : List.copyOf(operations));
  }

  /**
   * The features the node's kubelet declares in {@code status.declaredFeatures} (for DRA: {@code
   * DRAOptionalNodeOperations}); empty when none or no status.
   */
  public static List<String> declaredFeatures(Node node) {
    return node.getStatus() == null
        ? List.of()
        : strings(node.getStatus().getAdditionalProperties().get(DECLARED_FEATURES));
  }

  public static void setDeclaredFeatures(Node node, List<String> features) {
    if (node.getStatus() == null) {
      if (features.isEmpty()) {
        return;
      }
      node.setStatus(new io.fabric8.kubernetes.api.model.NodeStatus());
    }
    put(
        node.getStatus().getAdditionalProperties(),
        DECLARED_FEATURES,
        features.isEmpty() ? null : List.copyOf(features));
  }

  /** {@code DRADeviceCompatibilityGroups}: the groups of a counter consumption; empty when none. */
  public static List<String> compatibilityGroups(DeviceCounterConsumption c) {
    return strings(c.getAdditionalProperties().get(COMPATIBILITY_GROUPS));
  }

  public static void setCompatibilityGroups(DeviceCounterConsumption c, List<String> groups) {
    put(c.getAdditionalProperties(), COMPATIBILITY_GROUPS, groups.isEmpty() ? null : groups);
  }

  public static List<DerivedAttribute> derivedAttributes(ExactDeviceRequest r) {
    return derived(r.getAdditionalProperties().get(DERIVED_ATTRIBUTES));
  }

  public static List<DerivedAttribute> derivedAttributes(DeviceSubRequest r) {
    return derived(r.getAdditionalProperties().get(DERIVED_ATTRIBUTES));
  }

  public static void setDerivedAttributes(ExactDeviceRequest r, List<DerivedAttribute> attrs) {
    put(r.getAdditionalProperties(), DERIVED_ATTRIBUTES, derivedJson(attrs));
  }

  public static void setDerivedAttributes(DeviceSubRequest r, List<DerivedAttribute> attrs) {
    put(r.getAdditionalProperties(), DERIVED_ATTRIBUTES, derivedJson(attrs));
  }

  /** {@code DRAPartitionableDevicesType}: the attribute naming each device's partition type. */
  public static Optional<String> partitionTypeAttribute(ResourceSliceSpec spec) {
    return spec.getAdditionalProperties().get(PARTITION_TYPE_ATTRIBUTE) instanceof String s
        ? Optional.of(s)
        : Optional.empty();
  }

  public static void setPartitionTypeAttribute(ResourceSliceSpec spec, String attribute) {
    put(spec.getAdditionalProperties(), PARTITION_TYPE_ATTRIBUTE, attribute);
  }

  /**
   * {@code DRANodeAllocatableResources} (1.37; 1.36 called it {@code
   * nodeAllocatableResourceMappings}, with another shape, which 1.37 servers no longer serve): by
   * node resource name; empty when none.
   */
  public static Map<String, NodeAllocatableResource> nodeAllocatableResources(Device d) {
    Map<String, NodeAllocatableResource> out = new LinkedHashMap<>();
    if (d.getAdditionalProperties().get(NODE_ALLOCATABLE_RESOURCES) instanceof Map<?, ?> m) {
      m.forEach(
          (name, value) -> {
            if (name instanceof String n && value instanceof Map<?, ?> v) {
              Mapping mapping =
                  v.get("mapping") instanceof Map<?, ?> mm
                      ? new Mapping(
                          mm.get("capacityKey") instanceof String k ? k : null,
                          quantity(mm.get("capacityMultiplier")),
                          quantity(mm.get("deviceMultiplier")))
                      : null;
              Overhead overhead =
                  v.get("overhead") instanceof Map<?, ?> o
                      ? new Overhead(quantity(o.get("perPod")), quantity(o.get("perContainer")))
                      : null;
              out.put(n, new NodeAllocatableResource(mapping, overhead));
            }
          });
    }
    return out;
  }

  /** Writes {@code resources} as the API server serves them; empty removes the field. */
  public static void setNodeAllocatableResources(
      Device d, Map<String, NodeAllocatableResource> resources) {
    Map<String, Object> out = new LinkedHashMap<>();
    resources.forEach(
        (name, r) -> {
          Map<String, Object> entry = new LinkedHashMap<>();
          if (r.mapping() != null) {
            Map<String, Object> m = new LinkedHashMap<>();
            putQuantity(m, "capacityMultiplier", r.mapping().capacityMultiplier());
            if (r.mapping().capacityKey() != null) {
              m.put("capacityKey", r.mapping().capacityKey());
            }
            putQuantity(m, "deviceMultiplier", r.mapping().deviceMultiplier());
            entry.put("mapping", m);
          }
          if (r.overhead() != null) {
            Map<String, Object> o = new LinkedHashMap<>();
            putQuantity(o, "perContainer", r.overhead().perContainer());
            putQuantity(o, "perPod", r.overhead().perPod());
            entry.put("overhead", o);
          }
          out.put(name, entry);
        });
    put(d.getAdditionalProperties(), NODE_ALLOCATABLE_RESOURCES, out.isEmpty() ? null : out);
  }

  private static void putQuantity(Map<String, Object> m, String key, Quantity q) {
    if (q != null) {
      m.put(key, q.toString());
    }
  }

  private static List<String> strings(Object value) {
    List<String> out = new ArrayList<>();
    if (value instanceof List<?> list) {
      for (Object o : list) {
        if (o instanceof String s) {
          out.add(s);
        }
      }
    }
    return List.copyOf(out);
  }

  private static List<DerivedAttribute> derived(Object value) {
    List<DerivedAttribute> out = new ArrayList<>();
    if (value instanceof List<?> list) {
      for (Object o : list) {
        if (o instanceof Map<?, ?> m
            && m.get("name") instanceof String name
            && m.get("expression") instanceof String expression) {
          out.add(new DerivedAttribute(name, expression));
        }
      }
    }
    return List.copyOf(out);
  }

  private static List<Map<String, String>> derivedJson(List<DerivedAttribute> attrs) {
    if (attrs.isEmpty()) {
      return null;
    }
    List<Map<String, String>> out = new ArrayList<>();
    for (DerivedAttribute a : attrs) {
      Map<String, String> m = new LinkedHashMap<>();
      m.put("name", a.name());
      m.put("expression", a.expression());
      out.add(m);
    }
    return out;
  }

  private static Quantity quantity(Object value) {
    if (value instanceof String s && Quantity.isQuantity(s)) {
      return Quantity.parse(s);
    }
    if (value instanceof Number n) {
      return Quantity.parse(n.toString());
    }
    return null;
  }

  private static void put(Map<String, Object> properties, String name, Object value) {
    if (value == null) {
      properties.remove(name);
    } else {
      properties.put(name, value);
    }
  }
}
