package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicy;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequirements;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.OpaqueDeviceConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.api.model.runtime.RawExtension;
import io.kdra.core.model.NewerFields.DerivedAttribute;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRuleSpec;
import io.kdra.core.taint.DeviceTaintSelector;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Tiny fixture factories for allocator tests (validation tests use {@link Fixtures}), after
 * upstream's {@code allocator_testing.go}: {@code claim()}, {@code request()}, {@code
 * deviceClass()}, {@code slice()}, {@code device()}, {@code node()}, each returning the API object
 * or a fluent wrapper with {@code with*()} methods. Defaults: namespace {@code default}, driver
 * {@link #DRIVER}, pool generation 0 with one slice.
 */
public final class AllocFixtures {

  public static final String DRIVER = "gpu.example.com";

  private AllocFixtures() {}

  // ---- claims ----------------------------------------------------------------------------

  /** A claim in namespace {@code default} with the given requests. */
  public static ClaimWrapper claim(String name, DeviceRequest... requests) {
    ResourceClaim c =
        new ResourceClaimBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace("default")
            .withUid("uid-" + name)
            .endMetadata()
            .withNewSpec()
            .withNewDevices()
            .withRequests(new ArrayList<>(Arrays.asList(requests)))
            .endDevices()
            .endSpec()
            .build();
    return new ClaimWrapper(c);
  }

  /** Fluent additions to a claim. */
  public record ClaimWrapper(ResourceClaim claim) {
    public ClaimWrapper withConstraint(String matchAttribute, String... requests) {
      DeviceConstraint c = new DeviceConstraint();
      c.setMatchAttribute(matchAttribute);
      c.setRequests(List.of(requests));
      return add(c);
    }

    public ClaimWrapper withDistinct(String distinctAttribute, String... requests) {
      DeviceConstraint c = new DeviceConstraint();
      c.setDistinctAttribute(distinctAttribute);
      c.setRequests(List.of(requests));
      return add(c);
    }

    private ClaimWrapper add(DeviceConstraint c) {
      var d = claim.getSpec().getDevices();
      List<DeviceConstraint> list =
          new ArrayList<>(d.getConstraints() == null ? List.of() : d.getConstraints());
      list.add(c);
      d.setConstraints(list);
      return this;
    }

    public ClaimWrapper withConfig(String driver, String json, String... requests) {
      DeviceClaimConfiguration c = new DeviceClaimConfiguration();
      c.setRequests(List.of(requests));
      c.setOpaque(opaque(driver, json));
      var d = claim.getSpec().getDevices();
      List<DeviceClaimConfiguration> list =
          new ArrayList<>(d.getConfig() == null ? List.of() : d.getConfig());
      list.add(c);
      d.setConfig(list);
      return this;
    }

    /** The claim as already allocated with these {@code driver/pool/device} IDs. */
    public ClaimWrapper withAllocated(String... deviceIds) {
      List<DeviceRequestAllocationResult> results = new ArrayList<>();
      for (String id : deviceIds) {
        String[] p = id.split("/");
        DeviceRequestAllocationResult r = new DeviceRequestAllocationResult();
        r.setRequest("req");
        r.setDriver(p[0]);
        r.setPool(p[1]);
        r.setDevice(p[2]);
        results.add(r);
      }
      AllocationResult a = new AllocationResult();
      a.setDevices(new io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationResult());
      a.getDevices().setResults(results);
      claim.setStatus(new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus());
      claim.getStatus().setAllocation(a);
      return this;
    }

    public ResourceClaim build() {
      return claim;
    }
  }

  /** An {@code exactly} request for one device of the class. */
  public static RequestWrapper request(String name, String className) {
    DeviceRequest r = new DeviceRequest();
    r.setName(name);
    ExactDeviceRequest e = new ExactDeviceRequest();
    e.setDeviceClassName(className);
    r.setExactly(e);
    return new RequestWrapper(r);
  }

  /** A {@code firstAvailable} request; subrequests from {@link #sub}. */
  public static DeviceRequest firstAvailable(String name, DeviceSubRequest... subs) {
    DeviceRequest r = new DeviceRequest();
    r.setName(name);
    r.setFirstAvailable(List.of(subs));
    return r;
  }

  /** A subrequest; {@code count} devices of the class matching all selectors. */
  public static DeviceSubRequest sub(
      String name, String className, long count, String... selectors) {
    DeviceSubRequest s = new DeviceSubRequest();
    s.setName(name);
    s.setDeviceClassName(className);
    s.setCount(count);
    s.setAllocationMode("ExactCount");
    s.setSelectors(selectors(selectors));
    return s;
  }

  /** Fluent changes to an {@code exactly} request; converts implicitly via {@link #build()}. */
  public record RequestWrapper(DeviceRequest request) {
    private ExactDeviceRequest e() {
      return request.getExactly();
    }

    public RequestWrapper withCount(long n) {
      e().setAllocationMode("ExactCount");
      e().setCount(n);
      return this;
    }

    public RequestWrapper withAll() {
      e().setAllocationMode("All");
      return this;
    }

    public RequestWrapper withSelectors(String... exprs) {
      e().setSelectors(selectors(exprs));
      return this;
    }

    public RequestWrapper withAdminAccess() {
      e().setAdminAccess(true);
      return this;
    }

    public RequestWrapper withToleration(String key, String operator, String value, String effect) {
      DeviceToleration t = new DeviceToleration();
      t.setKey(key);
      t.setOperator(operator);
      t.setValue(value);
      t.setEffect(effect);
      List<DeviceToleration> list =
          new ArrayList<>(e().getTolerations() == null ? List.of() : e().getTolerations());
      list.add(t);
      e().setTolerations(list);
      return this;
    }

    public RequestWrapper withCapacity(String name, String quantity) {
      CapacityRequirements c =
          e().getCapacity() == null ? new CapacityRequirements() : e().getCapacity();
      Map<String, Quantity> m =
          new java.util.HashMap<>(c.getRequests() == null ? Map.of() : c.getRequests());
      m.put(name, new Quantity(quantity));
      c.setRequests(m);
      e().setCapacity(c);
      return this;
    }

    /** A derived attribute (1.37 alpha {@code derivedAttributes}). */
    public RequestWrapper withDerived(String name, String expression) {
      List<DerivedAttribute> list =
          new ArrayList<>(io.kdra.core.model.NewerFields.derivedAttributes(e()));
      list.add(new DerivedAttribute(name, expression));
      io.kdra.core.model.NewerFields.setDerivedAttributes(e(), list);
      return this;
    }

    public DeviceRequest build() {
      return request;
    }
  }

  // ---- classes -----------------------------------------------------------------------------

  /** A class whose devices satisfy all selectors. */
  public static DeviceClass deviceClass(String name, String... selectors) {
    return new DeviceClassBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withSelectors(selectors(selectors))
        .endSpec()
        .build();
  }

  /** A class with one opaque config entry. */
  public static DeviceClass deviceClassWithConfig(
      String name, String driver, String json, String... selectors) {
    DeviceClass c = deviceClass(name, selectors);
    DeviceClassConfiguration cfg = new DeviceClassConfiguration();
    cfg.setOpaque(opaque(driver, json));
    c.getSpec().setConfig(List.of(cfg));
    return c;
  }

  public static OpaqueDeviceConfiguration opaque(String driver, String json) {
    OpaqueDeviceConfiguration o = new OpaqueDeviceConfiguration();
    o.setDriver(driver);
    o.setParameters(new RawExtension(json));
    return o;
  }

  static List<DeviceSelector> selectors(String... exprs) {
    List<DeviceSelector> list = new ArrayList<>();
    for (String e : exprs) {
      DeviceSelector s = new DeviceSelector();
      s.setCel(new io.fabric8.kubernetes.api.model.resource.v1.CELDeviceSelector(e));
      list.add(s);
    }
    return list;
  }

  // ---- slices and devices ---------------------------------------------------------------------

  /** A node-local slice of {@link #DRIVER}: pool named after the node, generation 0, 1 slice. */
  public static SliceWrapper slice(String name, String node, Device... devices) {
    ResourceSlice s =
        new ResourceSliceBuilder()
            .withNewMetadata()
            .withName(name)
            .endMetadata()
            .withNewSpec()
            .withDriver(DRIVER)
            .withNodeName(node)
            .withNewPool()
            .withName(node)
            .withGeneration(0L)
            .withResourceSliceCount(1L)
            .endPool()
            .withDevices(List.of(devices))
            .endSpec()
            .build();
    return new SliceWrapper(s);
  }

  /** Fluent changes to a slice. */
  public record SliceWrapper(ResourceSlice slice) {
    public SliceWrapper withPool(String pool, long generation, long sliceCount) {
      slice.getSpec().getPool().setName(pool);
      slice.getSpec().getPool().setGeneration(generation);
      slice.getSpec().getPool().setResourceSliceCount(sliceCount);
      return this;
    }

    public SliceWrapper withDriver(String driver) {
      slice.getSpec().setDriver(driver);
      return this;
    }

    public SliceWrapper withAllNodes() {
      slice.getSpec().setNodeName(null);
      slice.getSpec().setAllNodes(true);
      return this;
    }

    /** Network-attached: visible from nodes with this label. */
    public SliceWrapper withNodeSelector(String label, String value) {
      slice.getSpec().setNodeName(null);
      slice.getSpec().setNodeSelector(labelSelector(label, value));
      return this;
    }

    public SliceWrapper withPerDeviceNodeSelection() {
      slice.getSpec().setNodeName(null);
      slice.getSpec().setPerDeviceNodeSelection(true);
      return this;
    }

    /** A counter set; pass name/quantity pairs. */
    public SliceWrapper withCounterSet(String set, String... counters) {
      CounterSet cs = new CounterSet();
      cs.setName(set);
      cs.setCounters(counters(counters));
      List<CounterSet> list =
          new ArrayList<>(
              slice.getSpec().getSharedCounters() == null
                  ? List.of()
                  : slice.getSpec().getSharedCounters());
      list.add(cs);
      slice.getSpec().setSharedCounters(list);
      return this;
    }

    public ResourceSlice build() {
      return slice;
    }
  }

  public static NodeSelector labelSelector(String label, String value) {
    return new NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .addToMatchExpressions(
            new NodeSelectorRequirementBuilder()
                .withKey(label)
                .withOperator("In")
                .withValues(value)
                .build())
        .endNodeSelectorTerm()
        .build();
  }

  /** A device with no attributes. */
  public static DeviceWrapper device(String name) {
    Device d = new Device();
    d.setName(name);
    return new DeviceWrapper(d);
  }

  /** Fluent changes to a device; {@link #build()} (or pass {@code .device()}) at the end. */
  public record DeviceWrapper(Device device) {
    public DeviceWrapper withString(String attr, String value) {
      DeviceAttribute a = new DeviceAttribute();
      a.setString(value);
      return attr(attr, a);
    }

    public DeviceWrapper withInt(String attr, long value) {
      DeviceAttribute a = new DeviceAttribute();
      a.setInt(value);
      return attr(attr, a);
    }

    public DeviceWrapper withBool(String attr, boolean value) {
      DeviceAttribute a = new DeviceAttribute();
      a.setBool(value);
      return attr(attr, a);
    }

    public DeviceWrapper withVersion(String attr, String value) {
      DeviceAttribute a = new DeviceAttribute();
      a.setVersion(value);
      return attr(attr, a);
    }

    private DeviceWrapper attr(String name, DeviceAttribute a) {
      Map<String, DeviceAttribute> m =
          new java.util.LinkedHashMap<>(
              device.getAttributes() == null ? Map.of() : device.getAttributes());
      m.put(name, a);
      device.setAttributes(m);
      return this;
    }

    public DeviceWrapper withCapacity(String name, String value) {
      return withCapacity(name, value, null);
    }

    public DeviceWrapper withCapacity(String name, String value, CapacityRequestPolicy policy) {
      DeviceCapacity c = new DeviceCapacity();
      c.setValue(new Quantity(value));
      c.setRequestPolicy(policy);
      Map<String, DeviceCapacity> m =
          new java.util.LinkedHashMap<>(
              device.getCapacity() == null ? Map.of() : device.getCapacity());
      m.put(name, c);
      device.setCapacity(m);
      return this;
    }

    public DeviceWrapper withTaint(String key, String value, String effect) {
      DeviceTaint t = new DeviceTaint();
      t.setKey(key);
      t.setValue(value);
      t.setEffect(effect);
      List<DeviceTaint> list =
          new ArrayList<>(device.getTaints() == null ? List.of() : device.getTaints());
      list.add(t);
      device.setTaints(list);
      return this;
    }

    /** Consumes counters from a set; pass name/quantity pairs. */
    public DeviceWrapper withConsumes(String set, String... counters) {
      DeviceCounterConsumption c = new DeviceCounterConsumption();
      c.setCounterSet(set);
      c.setCounters(counters(counters));
      List<DeviceCounterConsumption> list =
          new ArrayList<>(
              device.getConsumesCounters() == null ? List.of() : device.getConsumesCounters());
      list.add(c);
      device.setConsumesCounters(list);
      return this;
    }

    /**
     * Consumes counters from a set within compatibility groups (1.37 alpha {@code
     * compatibilityGroups}); pass name/quantity pairs.
     */
    public DeviceWrapper withConsumesInGroups(String set, List<String> groups, String... counters) {
      withConsumes(set, counters);
      io.kdra.core.model.NewerFields.setCompatibilityGroups(
          device.getConsumesCounters().get(device.getConsumesCounters().size() - 1), groups);
      return this;
    }

    public DeviceWrapper withMultipleAllocations() {
      device.setAllowMultipleAllocations(true);
      return this;
    }

    public DeviceWrapper withBindingConditions(String... conditions) {
      device.setBindingConditions(List.of(conditions));
      device.setBindingFailureConditions(List.of("failed"));
      return this;
    }

    public DeviceWrapper withNodeName(String node) {
      device.setNodeName(node);
      return this;
    }

    public DeviceWrapper withAllNodes() {
      device.setAllNodes(true);
      return this;
    }

    public DeviceWrapper withBindsToNode() {
      device.setBindsToNode(true);
      return this;
    }

    public Device build() {
      return device;
    }
  }

  /** A GPU with model and memory attributes and a PCIe root, as most tests need. */
  public static Device gpu(String name, String model, String memory, String pcieRoot) {
    return device(name)
        .withString("model", model)
        .withString("resource.kubernetes.io/pcieRoot", pcieRoot)
        .withCapacity("memory", memory)
        .build();
  }

  static Map<String, Counter> counters(String... pairs) {
    Map<String, Counter> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i + 1 < pairs.length; i += 2) {
      Counter c = new Counter();
      c.setValue(new Quantity(pairs[i + 1]));
      m.put(pairs[i], c);
    }
    return m;
  }

  // ---- nodes ----------------------------------------------------------------------------------

  /** A node with the given label pairs. */
  public static Node node(String name, String... labels) {
    NodeBuilder b = new NodeBuilder().withNewMetadata().withName(name).endMetadata();
    Node n = b.build();
    Map<String, String> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i + 1 < labels.length; i += 2) {
      m.put(labels[i], labels[i + 1]);
    }
    n.getMetadata().setLabels(m);
    return n;
  }

  /**
   * A DeviceTaintRule {@code name} whose selector has the non-null ones of driver, pool and device
   * ({@code matchAll}: an empty selector; otherwise all three null means no selector at all).
   */
  public static DeviceTaintRule taintRule(
      String name,
      String driver,
      String pool,
      String device,
      String key,
      String value,
      String effect) {
    DeviceTaintSelector selector =
        driver == null && pool == null && device == null
            ? null
            : new DeviceTaintSelector(driver, pool, device);
    return new DeviceTaintRule(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(name)
            .withUid("uid-" + name)
            .withGeneration(1L)
            .build(),
        new DeviceTaintRuleSpec(selector, new DeviceTaint(effect, key, null, value)));
  }

  /** A DeviceTaintRule with the empty selector: it taints every device. */
  public static DeviceTaintRule taintEverything(String name, String key, String effect) {
    DeviceTaintRule r = taintRule(name, "x", null, null, key, null, effect);
    r.getSpec().setDeviceSelector(new DeviceTaintSelector());
    return r;
  }
}
