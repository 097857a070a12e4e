package io.kdra.computeclassbridge.mapping;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.kdra.computeclassbridge.catalog.Accelerator;
import io.kdra.computeclassbridge.catalog.AcceleratorCatalog;
import io.kdra.computeclassbridge.catalog.AcceleratorKind;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Gpu;
import io.kdra.computeclassbridge.model.Priority;
import io.kdra.computeclassbridge.model.Tpu;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The bridge's decision: ComputeClass + catalog + namespaces -> DeviceClasses, templates and the
 * priorities left out. A pure function: no clock, no API, no configuration lookup; equal inputs
 * give equal outputs, which is what lets the reconciler compare desired with actual objects.
 *
 * <p>Each priority naming a GPU or TPU becomes one {@code firstAvailable} subrequest, in priority
 * order, with the priority's count. Upstream allows at most {@value #MAX_SUBREQUESTS} subrequests
 * and {@value #MAX_DEVICES} devices per claim; priorities beyond that are problems. A priority
 * asking for the same devices as an earlier one is skipped: DRA would only try the same request
 * twice. Node-level differences between such priorities (spot, zone, machine family) stay with
 * GKE's autoscaler.
 */
public final class ComputeClassMapper {

  /** {@code FirstAvailableDeviceRequestMaxSize}. */
  public static final int MAX_SUBREQUESTS = 8;

  /** {@code AllocationResultsMaxSize}: devices one claim can get. */
  public static final int MAX_DEVICES = 32;

  private final MapperSettings settings;

  public ComputeClassMapper(MapperSettings settings) {
    this.settings = settings;
  }

  /**
   * Maps one ComputeClass.
   *
   * @param computeClass needs metadata name and uid; status is ignored
   * @param catalog with the profiles to use already enabled
   * @param namespaces where templates go; order and duplicates do not matter
   */
  public Mapping map(
      ComputeClass computeClass, AcceleratorCatalog catalog, Collection<String> namespaces) {
    List<Priority> priorities =
        computeClass.getSpec() == null ? List.of() : computeClass.getSpec().getPriorities();
    List<Alternative> alternatives = new ArrayList<>();
    Map<String, Integer> firstBySubrequest = new LinkedHashMap<>();
    List<PriorityNote> skipped = new ArrayList<>();
    List<PriorityNote> problems = new ArrayList<>();
    for (int i = 0; i < priorities.size(); i++) {
      Priority p = priorities.get(i);
      String where = "spec.priorities[" + i + "] (" + describe(p) + ")";
      if (p.getGpu() == null && p.getTpu() == null) {
        skipped.add(new PriorityNote(i, where + ": no gpu or tpu, nothing to request through DRA"));
        continue;
      }
      if (p.getGpu() != null && p.getTpu() != null) {
        problems.add(new PriorityNote(i, where + ": names both gpu and tpu"));
        continue;
      }
      Resolution r = resolve(i, p, catalog);
      if (r.problem != null) {
        problems.add(new PriorityNote(i, where + ": " + r.problem));
        continue;
      }
      Integer earlier = firstBySubrequest.putIfAbsent(r.alternative.subrequestName(), i);
      if (earlier != null) {
        skipped.add(
            new PriorityNote(
                i, where + ": asks for the same devices as spec.priorities[" + earlier + "]"));
      } else if (alternatives.size() == MAX_SUBREQUESTS) {
        problems.add(
            new PriorityNote(
                i,
                where
                    + ": left out, a request takes at most "
                    + MAX_SUBREQUESTS
                    + " alternatives (firstAvailable)"));
      } else {
        alternatives.add(r.alternative);
      }
    }
    return new Mapping(
        alternatives,
        deviceClasses(computeClass, catalog, alternatives),
        templates(computeClass, catalog, namespaces, alternatives),
        skipped,
        problems);
  }

  private record Resolution(Alternative alternative, String problem) {}

  private Resolution resolve(int index, Priority p, AcceleratorCatalog catalog) {
    AcceleratorKind kind = p.getGpu() != null ? AcceleratorKind.GPU : AcceleratorKind.TPU;
    String type = p.getGpu() != null ? p.getGpu().getType() : p.getTpu().getType();
    Integer count = p.getGpu() != null ? p.getGpu().getCount() : p.getTpu().getCount();
    String topology = p.getTpu() != null ? p.getTpu().getTopology() : null;
    String field = kind.text();
    if (type == null || type.isBlank()) {
      return problem(field + ".type is required");
    }
    Optional<Accelerator> found = catalog.find(type);
    if (found.isEmpty()) {
      return problem(
          "unknown accelerator type "
              + type
              + "; the catalog knows "
              + catalog.types().stream()
                  .filter(t -> catalog.find(t).get().kind() == kind)
                  .toList());
    }
    Accelerator accelerator = found.get();
    if (accelerator.kind() != kind) {
      return problem(
          type + " is a " + accelerator.kind().text() + " type, not a " + field + " type");
    }
    int n = count == null ? 1 : count;
    if (n < 1 || n > MAX_DEVICES) {
      return problem(field + ".count must be between 1 and " + MAX_DEVICES + ", is " + n);
    }
    if (catalog.deviceSelector(accelerator).isEmpty()) {
      return problem(
          "no enabled driver profile selects "
              + type
              + " (enabled: "
              + catalog.enabledProfiles()
              + ")");
    }
    if (topology != null) {
      try {
        catalog.topologySelector(accelerator, topology);
      } catch (IllegalArgumentException e) {
        return problem(field + "." + e.getMessage());
      }
    }
    String name = subrequestName(type, n, topology);
    return new Resolution(
        new Alternative(
            index,
            accelerator,
            n,
            Optional.ofNullable(topology),
            name,
            settings.deviceClassName(type)),
        null);
  }

  private static Resolution problem(String message) {
    return new Resolution(null, message);
  }

  /** {@code nvidia-l4-x2}, {@code tpu-v5-lite-podslice-x4-2x2}: stable under reordering. */
  static String subrequestName(String type, int count, String topology) {
    String name = type + "-x" + count + (topology == null ? "" : "-" + topology);
    return name.length() <= 63 ? name : Labels.value(name);
  }

  private List<DeviceClass> deviceClasses(
      ComputeClass cc, AcceleratorCatalog catalog, List<Alternative> alternatives) {
    Map<String, DeviceClass> byName = new TreeMap<>();
    for (Alternative a : alternatives) {
      byName.computeIfAbsent(
          a.deviceClassName(),
          name ->
              Manifests.deviceClass(
                  name,
                  a.accelerator(),
                  catalog.deviceSelector(a.accelerator()).orElseThrow(),
                  cc));
    }
    return List.copyOf(byName.values());
  }

  private List<ResourceClaimTemplate> templates(
      ComputeClass cc,
      AcceleratorCatalog catalog,
      Collection<String> namespaces,
      List<Alternative> alternatives) {
    if (alternatives.isEmpty()) {
      return List.of();
    }
    List<DeviceSubRequest> subrequests =
        alternatives.stream()
            .map(
                a ->
                    Manifests.subrequest(
                        a, a.topology().flatMap(t -> catalog.topologySelector(a.accelerator(), t))))
            .toList();
    return new TreeSet<>(namespaces)
        .stream()
            .map(ns -> Manifests.template(cc, ns, settings.requestName(), subrequests))
            .toList();
  }

  /** A short description of a priority for messages: what it asks for. */
  static String describe(Priority p) {
    Gpu gpu = p.getGpu();
    Tpu tpu = p.getTpu();
    if (gpu != null) {
      return "gpu " + gpu.getType() + " x" + (gpu.getCount() == null ? 1 : gpu.getCount());
    }
    if (tpu != null) {
      return "tpu "
          + tpu.getType()
          + " x"
          + (tpu.getCount() == null ? 1 : tpu.getCount())
          + (tpu.getTopology() == null ? "" : " " + tpu.getTopology());
    }
    if (p.getNodepools() != null) {
      return "nodepools " + p.getNodepools();
    }
    if (p.getMachineType() != null) {
      return "machineType " + p.getMachineType();
    }
    if (p.getMachineFamily() != null) {
      return "machineFamily " + p.getMachineFamily();
    }
    return "no machine or accelerator";
  }
}
