package io.kdra.core.testing;

import static io.kdra.core.testing.ScenarioGenerator.GPU;
import static io.kdra.core.testing.ScenarioGenerator.PCIE;
import static io.kdra.core.testing.ScenarioGenerator.TAINT_KEY;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequirements;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.kdra.core.testing.FreeDevices.Placed;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;

/**
 * Draws claims from the basic stream: counts, {@code All}, {@code firstAvailable}, tolerations,
 * capacity requests, {@code matchAttribute} and {@code distinctAttribute}; and claims that hold
 * free devices before the run. The extended profile's additions come from {@link ProfileShapes}.
 */
final class ClaimDraw {

  private final Random r;
  private final SelectorGrammar grammar;
  private final ProfileShapes shapes;

  ClaimDraw(DrawStreams streams, ProfileShapes shapes) {
    this.r = streams.basic;
    this.grammar = new SelectorGrammar(streams.basic);
    this.shapes = shapes;
  }

  /** A pending claim. */
  ResourceClaim pending(String name) {
    return claim(name, spec());
  }

  /** A claim that holds one or two free devices before the run; null when none is free. */
  ResourceClaim allocated(String name, FreeDevices free) {
    List<DeviceRequestAllocationResult> results = new ArrayList<>();
    String node = null;
    int want = 1 + r.nextInt(2);
    for (int attempt = 0; attempt < 6 && results.size() < want && !free.isEmpty(); attempt++) {
      Placed p = free.get(r.nextInt(free.size()));
      if (p.node() != null && node != null && !node.equals(p.node())) {
        continue;
      }
      DeviceRequestAllocationResult res = free.take(p);
      if (res == null) {
        continue;
      }
      if (p.node() != null) {
        node = p.node();
      }
      results.add(res);
    }
    if (results.isEmpty()) {
      return null;
    }
    ResourceClaim c = claim(name, spec());
    DeviceRequest req = new DeviceRequest();
    req.setName("req");
    ExactDeviceRequest e = new ExactDeviceRequest();
    e.setDeviceClassName("gpu");
    e.setCount((long) results.size());
    e.setAllocationMode("ExactCount");
    req.setExactly(e);
    c.getSpec().getDevices().setRequests(List.of(req));
    c.getSpec().getDevices().setConstraints(List.of());
    AllocationResult a = new AllocationResult();
    DeviceAllocationResult devices = new DeviceAllocationResult();
    devices.setResults(results);
    a.setDevices(devices);
    if (node != null) {
      a.setNodeSelector(nodeName(node));
    }
    ResourceClaimStatus status = new ResourceClaimStatus();
    status.setAllocation(a);
    c.setStatus(status);
    return c;
  }

  /** A node selector that names one node, as kube-scheduler writes it into an allocation. */
  static NodeSelector nodeName(String node) {
    return new NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .addToMatchFields(
            new NodeSelectorRequirementBuilder()
                .withKey("metadata.name")
                .withOperator("In")
                .withValues(node)
                .build())
        .endNodeSelectorTerm()
        .build();
  }

  /** A claim's spec: one to three requests, and at times constraints among them. */
  ResourceClaimSpec spec() {
    int requests = r.nextInt(7) == 0 ? 3 : 1 + r.nextInt(2);
    List<DeviceRequest> list = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      DeviceRequest req = new DeviceRequest();
      req.setName("r" + i);
      if (r.nextInt(4) == 0) {
        List<DeviceSubRequest> subs = new ArrayList<>();
        int n = 2 + r.nextInt(2);
        for (int s = 0; s < n; s++) {
          DeviceSubRequest sub = new DeviceSubRequest();
          sub.setName("s" + s);
          String cls = className();
          sub.setDeviceClassName(cls);
          fill(
              cls,
              sub::setSelectors,
              sub::setAllocationMode,
              sub::setCount,
              sub::setTolerations,
              sub::setCapacity);
          subs.add(sub);
        }
        req.setFirstAvailable(subs);
      } else {
        ExactDeviceRequest e = new ExactDeviceRequest();
        String cls = className();
        e.setDeviceClassName(cls);
        fill(
            cls,
            e::setSelectors,
            e::setAllocationMode,
            e::setCount,
            e::setTolerations,
            e::setCapacity);
        shapes.exactRequest(e);
        req.setExactly(e);
      }
      list.add(req);
    }
    DeviceClaim devices = new DeviceClaim();
    devices.setRequests(list);
    List<DeviceConstraint> constraints = new ArrayList<>();
    if (r.nextInt(10) < 3) {
      DeviceConstraint c = new DeviceConstraint();
      int x = r.nextInt(20);
      c.setMatchAttribute(
          x < 10
              ? PCIE
              : x < 15 ? GPU + "/model" : x < 18 ? GPU + "/numa" : GPU + "/driverVersion");
      c.setRequests(constraintRequests(list));
      constraints.add(c);
    }
    if (r.nextInt(14) == 0) {
      DeviceConstraint c = new DeviceConstraint();
      c.setDistinctAttribute(r.nextBoolean() ? PCIE : GPU + "/numa");
      c.setRequests(constraintRequests(list));
      constraints.add(c);
    }
    shapes.derivedAttributes(list, constraints);
    devices.setConstraints(constraints);
    ResourceClaimSpec spec = new ResourceClaimSpec();
    spec.setDevices(devices);
    return spec;
  }

  private String className() {
    int x = r.nextInt(100);
    if (x < 35) {
      return "gpu";
    }
    if (x < 45) {
      return "gpu-big";
    }
    if (x < 52) {
      return "gpu-a100";
    }
    if (x < 57) {
      return "gpu-healthy";
    }
    if (x < 68) {
      return "nic";
    }
    if (x < 75) {
      return "fabric";
    }
    if (x < 84) {
      return "vgpu";
    }
    if (x < 93) {
      return "partition";
    }
    if (x < 98) {
      return "gpu-mig";
    }
    return "no-such-class";
  }

  /** Empty (all requests), or some request names; a subrequest by its full name at times. */
  private List<String> constraintRequests(List<DeviceRequest> requests) {
    if (r.nextBoolean() || requests.size() < 2) {
      return List.of();
    }
    List<String> names = new ArrayList<>();
    for (DeviceRequest q : requests) {
      if (r.nextInt(3) == 0) {
        continue;
      }
      if (!q.getFirstAvailable().isEmpty() && r.nextBoolean()) {
        names.add(q.getName() + "/" + q.getFirstAvailable().get(0).getName());
      } else {
        names.add(q.getName());
      }
    }
    return names.isEmpty() ? List.of(requests.get(0).getName()) : names;
  }

  /** The parts that exact requests and subrequests share, through their setters. */
  private void fill(
      String cls,
      Consumer<List<DeviceSelector>> selectors,
      Consumer<String> mode,
      Consumer<Long> count,
      Consumer<List<DeviceToleration>> tolerations,
      Consumer<CapacityRequirements> capacity) {
    int n = r.nextInt(20);
    int sel = n < 10 ? 0 : n < 17 ? 1 : 2;
    List<String> exprs = new ArrayList<>();
    for (int i = 0; i < sel; i++) {
      exprs.add(grammar.selector(cls));
    }
    if (!exprs.isEmpty()) {
      selectors.accept(AllocFixtures.selectors(exprs.toArray(new String[0])));
    }
    if (!cls.equals("vgpu") && r.nextInt(14) == 0) {
      mode.accept("All");
    } else {
      mode.accept("ExactCount");
      int c = r.nextInt(10);
      count.accept(c < 6 ? 1L : c < 9 ? 2L : 3L);
    }
    if (r.nextInt(8) == 0) {
      DeviceToleration t = new DeviceToleration();
      t.setKey(TAINT_KEY);
      if (r.nextBoolean()) {
        t.setOperator("Exists");
      } else {
        t.setOperator("Equal");
        t.setValue("true");
        t.setEffect("NoSchedule");
      }
      tolerations.accept(List.of(t));
    }
    shapes.tolerations(tolerations);
    CapacityRequirements req = null;
    if (cls.equals("vgpu") && r.nextInt(10) < 7) {
      req = new CapacityRequirements();
      req.setRequests(
          Map.of(
              "memory",
              new Quantity(new String[] {"1Gi", "4Gi", "6Gi", "10Gi", "30Gi"}[r.nextInt(5)])));
    }
    if (cls.equals("vgpu")) {
      req = shapes.coresRequest(req);
    }
    if (req != null) {
      capacity.accept(req);
    }
  }

  private static ResourceClaim claim(String name, ResourceClaimSpec spec) {
    ResourceClaim c = new ResourceClaim();
    ObjectMeta m = new ObjectMeta();
    m.setName(name);
    m.setNamespace("default");
    m.setUid("uid-" + name);
    c.setMetadata(m);
    c.setSpec(spec);
    return c;
  }
}
