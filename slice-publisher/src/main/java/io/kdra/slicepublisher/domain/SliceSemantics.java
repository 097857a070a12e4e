package io.kdra.slicepublisher.domain;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.ResourcePool;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Semantic equality of slices: what the API server would store, not how it is spelled.
 *
 * <p>Ignored: metadata noise (resourceVersion, managedFields, timestamps), a taint's {@code
 * timeAdded} (the API server defaults it), null versus empty lists and maps, false versus unset
 * booleans, and the spelling of quantities ({@code 1024Mi} equals {@code 1Gi}). Compared: the whole
 * spec, in order (reordering is a change, as upstream), and the controlling owner. Pure and
 * thread-safe.
 */
public final class SliceSemantics {

  /**
   * Canonical text by quantity text. A fleet has few distinct quantities (80Gi on every GPU), and
   * parsing them on every comparison dominated the cost of a steady-state sync. Bounded: cleared
   * when full. Pure function memo, so sharing it between threads is safe.
   */
  private static final Map<String, String> CANONICAL_QUANTITIES = new ConcurrentHashMap<>();

  private static final int MAX_CACHED_QUANTITIES = 4096;

  private SliceSemantics() {}

  /** True when both slices carry the same spec, generation included, and the same owner. */
  public static boolean equivalent(ResourceSlice a, ResourceSlice b) {
    return generation(a) == generation(b) && sameContent(a, b);
  }

  /** True when both carry the same spec apart from the pool generation, and the same owner. */
  public static boolean sameContent(ResourceSlice a, ResourceSlice b) {
    return owners(a).equals(owners(b))
        && canonical(a.getSpec(), false).equals(canonical(b.getSpec(), false));
  }

  /**
   * A value equal for two slices exactly when {@link #sameContent} holds for them: for remembering
   * what the API server made of a slice that was sent.
   */
  public static Object contentKey(ResourceSlice s) {
    return List.of(owners(s), canonical(s.getSpec(), false));
  }

  /** The pool generation of a slice; 0 when unset. */
  public static long generation(ResourceSlice s) {
    Long g =
        s.getSpec() == null || s.getSpec().getPool() == null
            ? null
            : s.getSpec().getPool().getGeneration();
    return g == null ? 0L : g;
  }

  private static List<String> owners(ResourceSlice s) {
    List<String> out = new ArrayList<>();
    if (s.getMetadata() != null && s.getMetadata().getOwnerReferences() != null) {
      for (OwnerReference o : s.getMetadata().getOwnerReferences()) {
        out.add(
            o.getApiVersion()
                + "|"
                + o.getKind()
                + "|"
                + o.getName()
                + "|"
                + o.getUid()
                + "|"
                + Boolean.TRUE.equals(o.getController()));
      }
    }
    return out;
  }

  /** A comparable value made of lists, tree maps and strings. */
  static Object canonical(ResourceSliceSpec spec, boolean withGeneration) {
    Map<String, Object> m = new TreeMap<>();
    if (spec == null) {
      return m;
    }
    m.put("driver", str(spec.getDriver()));
    ResourcePool pool = spec.getPool();
    if (pool != null) {
      m.put("pool", str(pool.getName()));
      m.put("count", str(pool.getResourceSliceCount()));
      if (withGeneration) {
        m.put("generation", str(pool.getGeneration() == null ? 0L : pool.getGeneration()));
      }
    }
    m.put("nodeName", str(spec.getNodeName()));
    m.put("nodeSelector", str(spec.getNodeSelector()));
    m.put("allNodes", Boolean.TRUE.equals(spec.getAllNodes()));
    m.put("perDevice", Boolean.TRUE.equals(spec.getPerDeviceNodeSelection()));
    m.put("devices", list(spec.getDevices(), SliceSemantics::device));
    m.put("counters", list(spec.getSharedCounters(), SliceSemantics::counterSet));
    m.put("extra", extra(spec.getAdditionalProperties()));
    return m;
  }

  private static Object device(Device d) {
    Map<String, Object> m = new TreeMap<>();
    m.put("name", str(d.getName()));
    Map<String, Object> attributes = new TreeMap<>();
    if (d.getAttributes() != null) {
      d.getAttributes().forEach((k, v) -> attributes.put(k, attribute(v)));
    }
    m.put("attributes", attributes);
    Map<String, Object> capacity = new TreeMap<>();
    if (d.getCapacity() != null) {
      d.getCapacity().forEach((k, v) -> capacity.put(k, capacity(v)));
    }
    m.put("capacity", capacity);
    m.put("consumes", list(d.getConsumesCounters(), SliceSemantics::consumption));
    m.put("taints", list(d.getTaints(), SliceSemantics::taint));
    m.put("multi", Boolean.TRUE.equals(d.getAllowMultipleAllocations()));
    m.put("bindsToNode", Boolean.TRUE.equals(d.getBindsToNode()));
    m.put("bindingConditions", list(d.getBindingConditions(), String::valueOf));
    m.put("bindingFailureConditions", list(d.getBindingFailureConditions(), String::valueOf));
    m.put("nodeName", str(d.getNodeName()));
    m.put("nodeSelector", str(d.getNodeSelector()));
    m.put("allNodes", Boolean.TRUE.equals(d.getAllNodes()));
    m.put("extra", extra(d.getAdditionalProperties()));
    return m;
  }

  private static Object attribute(DeviceAttribute a) {
    if (a == null) {
      return "null";
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
    return "other:" + extra(a.getAdditionalProperties());
  }

  private static Object capacity(DeviceCapacity c) {
    return quantity(c.getValue()) + "|" + str(c.getRequestPolicy());
  }

  private static Object consumption(DeviceCounterConsumption c) {
    return List.of(str(c.getCounterSet()), counters(c.getCounters()));
  }

  private static Object counterSet(CounterSet c) {
    return List.of(str(c.getName()), counters(c.getCounters()));
  }

  private static Object counters(Map<String, Counter> counters) {
    Map<String, String> m = new TreeMap<>();
    if (counters != null) {
      counters.forEach((k, v) -> m.put(k, v == null ? "null" : quantity(v.getValue())));
    }
    return m;
  }

  private static Object taint(DeviceTaint t) {
    // timeAdded is defaulted by the API server: comparing it would make every taint a change.
    return List.of(str(t.getKey()), str(t.getValue()), str(t.getEffect()));
  }

  /** The canonical text of a quantity; unparseable text compares as written. */
  static String quantity(Quantity q) {
    if (q == null) {
      return "null";
    }
    String text = q.getAmount() + (q.getFormat() == null ? "" : q.getFormat());
    String known = CANONICAL_QUANTITIES.get(text);
    if (known != null) {
      return known;
    }
    String canonical;
    try {
      canonical = io.kdra.core.model.Quantity.parse(text).toString();
    } catch (IllegalArgumentException e) {
      canonical = text;
    }
    if (CANONICAL_QUANTITIES.size() >= MAX_CACHED_QUANTITIES) {
      CANONICAL_QUANTITIES.clear();
    }
    CANONICAL_QUANTITIES.put(text, canonical);
    return canonical;
  }

  private static <T> List<Object> list(List<T> items, Function<T, Object> f) {
    List<Object> out = new ArrayList<>();
    if (items != null) {
      for (T item : items) {
        out.add(item == null ? "null" : f.apply(item));
      }
    }
    return out;
  }

  private static Object extra(Map<String, Object> extra) {
    return extra == null ? Map.of() : new TreeMap<>(extra).toString();
  }

  private static String str(Object o) {
    return Objects.toString(o, "");
  }
}
