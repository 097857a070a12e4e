package io.kdra.kubectl;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.kdra.core.cel.CelDevice;
import io.kdra.core.cel.CelSelectorException;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import io.kdra.core.taint.RuleTaint;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Every published device: its node, the DeviceClasses whose selectors it satisfies (evaluated with
 * dra-core's CEL environment, as the allocator does) and the claims that hold it. Only the newest
 * generation of each pool counts, as for the allocator. Pure.
 */
final class DeviceRows {

  private DeviceRows() {}

  /**
   * One device.
   *
   * @param node its node, {@code <all nodes>}, or {@code <node selector>}
   * @param classes matching class names, sorted; a class whose selector fails on the device is
   *     listed as {@code name(CEL error)}
   * @param claims {@code namespace/name} of the claims allocated this device, sorted
   * @param taints {@code key=value:Effect} each
   */
  record Row(
      String node,
      String driver,
      String pool,
      String device,
      List<String> classes,
      List<String> claims,
      List<String> taints) {}

  static List<Row> rows(
      List<ResourceSlice> slices,
      List<DeviceClass> classes,
      List<ResourceClaim> claims,
      DeviceSelectorEnvironment cel) {
    Map<String, List<String>> holders = holders(claims);
    Map<String, Long> newest = new HashMap<>();
    for (ResourceSlice s : slices) {
      if (usable(s)) {
        newest.merge(poolKey(s.getSpec()), generation(s.getSpec()), Math::max);
      }
    }
    List<Row> rows = new ArrayList<>();
    for (ResourceSlice s : slices) {
      ResourceSliceSpec spec = s.getSpec();
      if (!usable(s) || generation(spec) < newest.get(poolKey(spec)) || spec.getDevices() == null) {
        continue;
      }
      for (Device d : spec.getDevices()) {
        String id = spec.getDriver() + "/" + spec.getPool().getName() + "/" + d.getName();
        rows.add(
            new Row(
                node(spec, d),
                spec.getDriver(),
                spec.getPool().getName(),
                d.getName(),
                matching(spec.getDriver(), d, classes, cel),
                holders.getOrDefault(id, List.of()),
                taints(d)));
      }
    }
    rows.sort(
        Comparator.comparing(Row::node)
            .thenComparing(Row::driver)
            .thenComparing(Row::pool)
            .thenComparing(Row::device));
    return rows;
  }

  private static boolean usable(ResourceSlice s) {
    return s.getSpec() != null
        && s.getSpec().getDriver() != null
        && s.getSpec().getPool() != null
        && s.getSpec().getPool().getName() != null;
  }

  private static String poolKey(ResourceSliceSpec spec) {
    return spec.getDriver() + "/" + spec.getPool().getName();
  }

  private static long generation(ResourceSliceSpec spec) {
    return spec.getPool().getGeneration() == null ? 0 : spec.getPool().getGeneration();
  }

  private static String node(ResourceSliceSpec spec, Device d) {
    if (Boolean.TRUE.equals(spec.getPerDeviceNodeSelection())) {
      return node(d.getNodeName(), d.getAllNodes(), d.getNodeSelector() != null);
    }
    return node(spec.getNodeName(), spec.getAllNodes(), spec.getNodeSelector() != null);
  }

  private static String node(String name, Boolean all, boolean selector) {
    if (name != null && !name.isEmpty()) {
      return name;
    }
    if (Boolean.TRUE.equals(all)) {
      return "<all nodes>";
    }
    return selector ? "<node selector>" : "<none>";
  }

  private static List<String> matching(
      String driver, Device d, List<DeviceClass> classes, DeviceSelectorEnvironment cel) {
    CelDevice view;
    try {
      view = CelDevice.of(driver, d);
    } catch (IllegalArgumentException e) {
      return List.of("<invalid device: " + e.getMessage() + ">");
    }
    TreeSet<String> out = new TreeSet<>();
    for (DeviceClass c : classes) {
      List<DeviceSelector> selectors = c.getSpec() == null ? null : c.getSpec().getSelectors();
      String name = c.getMetadata().getName();
      try {
        boolean all = true;
        for (DeviceSelector s : selectors == null ? List.<DeviceSelector>of() : selectors) {
          if (s.getCel() == null
              || s.getCel().getExpression() == null
              || !cel.compile(s.getCel().getExpression()).matches(view)) {
            all = false;
            break;
          }
        }
        if (all) {
          out.add(name);
        }
      } catch (CelSelectorException e) {
        out.add(name + "(CEL error)");
      }
    }
    return List.copyOf(out);
  }

  private static Map<String, List<String>> holders(List<ResourceClaim> claims) {
    Map<String, TreeSet<String>> by = new HashMap<>();
    for (ResourceClaim c : claims) {
      if (!PodWhy.allocated(c)
          || c.getStatus().getAllocation().getDevices() == null
          || c.getStatus().getAllocation().getDevices().getResults() == null) {
        continue;
      }
      for (var r : c.getStatus().getAllocation().getDevices().getResults()) {
        by.computeIfAbsent(
                r.getDriver() + "/" + r.getPool() + "/" + r.getDevice(), k -> new TreeSet<>())
            .add(c.getMetadata().getNamespace() + "/" + c.getMetadata().getName());
      }
    }
    Map<String, List<String>> out = new HashMap<>();
    by.forEach((k, v) -> out.put(k, List.copyOf(v)));
    return out;
  }

  private static List<String> taints(Device d) {
    if (d.getTaints() == null) {
      return List.of();
    }
    return d.getTaints().stream()
        .map(
            t ->
                t.getKey()
                    + (t.getValue() == null || t.getValue().isEmpty() ? "" : "=" + t.getValue())
                    + ":"
                    + t.getEffect()
                    + (RuleTaint.origin(t) == null ? "" : " (" + RuleTaint.origin(t) + ")"))
        .toList();
  }
}
