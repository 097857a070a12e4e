package io.kdra.core.testing;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceConstraint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceToleration;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.cel.CelDevice;
import io.kdra.core.cel.CelSelectorException;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import io.kdra.core.model.Quantity;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Checks that allocation results are valid for a world, independently of how the allocator
 * searched: every device exists in the newest generation of a complete pool and is reachable from
 * the claim's node, is free (not held by a claim allocated before, not taken twice in this run
 * unless it allows multiple allocations), matches its class's and request's CEL selectors, is not
 * tainted against the request's tolerations; each request got its count (for {@code All}: every
 * matching device), one subrequest of a {@code firstAvailable} list; constraints hold; no shared
 * counter and no consumable capacity is exceeded; the claims of one pod share one node (the pod
 * rules: {@link #checkPods}). adminAccess: a result has it exactly when its request asks for it,
 * and such a device may be in use and does not count as allocated. A device's binding conditions
 * are copied into its result, and a device that binds to a node (or is reachable from some nodes
 * only) restricts the allocation's node selector. A pod's node meets the pod's node name, node
 * selector and required node affinity.
 *
 * <p>Pure: reads only its inputs. Reimplements the rules on purpose rather than calling the
 * allocator, so that the allocator's own bugs cannot hide here. CEL is evaluated with dra-core's
 * environment, which its own tests pin to upstream's.
 */
public final class AllocationChecker {

  private static final int MAX_RESULTS = 32;

  private final Map<String, DeviceClass> classes = new HashMap<>();
  private final Map<String, Node> nodes = new HashMap<>();
  private final List<ResourceClaim> before;

  /** driver/pool -> the newest generation's slices. */
  private final Map<String, List<ResourceSlice>> pools = new LinkedHashMap<>();

  private final Map<String, Entry> devices = new HashMap<>();
  private final DeviceSelectorEnvironment cel = DeviceSelectorEnvironment.create(true);

  /** A device of a pool's newest generation. */
  private record Entry(
      String driver, String pool, ResourceSlice slice, Device device, boolean complete) {
    String id() {
      return driver + "/" + pool + "/" + device.getName();
    }
  }

  public AllocationChecker(
      List<DeviceClass> classes,
      List<ResourceSlice> slices,
      List<Node> nodes,
      List<ResourceClaim> allocatedBefore) {
    classes.forEach(c -> this.classes.put(c.getMetadata().getName(), c));
    nodes.forEach(n -> this.nodes.put(n.getMetadata().getName(), n));
    this.before = List.copyOf(allocatedBefore);
    Map<String, Long> newest = new HashMap<>();
    for (ResourceSlice s : slices) {
      newest.merge(poolKey(s), s.getSpec().getPool().getGeneration(), Math::max);
    }
    for (ResourceSlice s : slices) {
      if (s.getSpec().getPool().getGeneration().equals(newest.get(poolKey(s)))) {
        pools.computeIfAbsent(poolKey(s), k -> new ArrayList<>()).add(s);
      }
    }
    for (List<ResourceSlice> pool : pools.values()) {
      boolean complete = pool.size() == pool.get(0).getSpec().getPool().getResourceSliceCount();
      for (ResourceSlice s : pool) {
        if (s.getSpec().getDevices() == null) {
          continue;
        }
        for (Device d : s.getSpec().getDevices()) {
          Entry e =
              new Entry(s.getSpec().getDriver(), s.getSpec().getPool().getName(), s, d, complete);
          devices.put(e.id(), e);
        }
      }
    }
  }

  /** A checker for a generated world (its claims with an allocation are the earlier ones). */
  public static AllocationChecker of(GeneratedScenario s) {
    return new AllocationChecker(s.classes(), s.slices(), s.nodes(), s.allocatedClaims());
  }

  private static String poolKey(ResourceSlice s) {
    return s.getSpec().getDriver() + "/" + s.getSpec().getPool().getName();
  }

  /**
   * All violations in these claims' allocations (claims without one are ignored), each naming the
   * claim and the rule; empty when every allocation is valid. {@code pods} may be empty.
   */
  public List<String> check(List<ResourceClaim> claims, List<Pod> pods) {
    List<String> out = new ArrayList<>();
    Map<String, String> taken = new HashMap<>();
    Map<String, Map<String, Quantity>> shared = new HashMap<>();
    Set<String> counted = new HashSet<>();
    Map<String, Quantity> counters = new TreeMap<>();
    for (ResourceClaim c : before) {
      for (DeviceRequestAllocationResult r : results(c)) {
        String id = id(r);
        Entry e = devices.get(id);
        if (r.getShareID() != null) {
          addAll(shared.computeIfAbsent(id, k -> new HashMap<>()), r.getConsumedCapacity());
        } else if (!Boolean.TRUE.equals(r.getAdminAccess())) {
          taken.put(id, key(c) + " (allocated before)");
        }
        if (e != null && !Boolean.TRUE.equals(r.getAdminAccess()) && counted.add(id)) {
          consume(e, counters);
        }
      }
    }
    for (ResourceClaim c : claims) {
      if (c.getStatus() == null || c.getStatus().getAllocation() == null) {
        continue;
      }
      String node = nodeName(c.getStatus().getAllocation().getNodeSelector());
      checkClaim(c, node, taken, shared, counted, counters, out);
    }
    checkShares(shared, out);
    counters.forEach(
        (k, used) -> {
          Quantity have = capacityOfCounter(k);
          if (have != null && used.compareTo(have) > 0) {
            out.add("counter " + k + " exceeded: " + used + " consumed of " + have);
          }
        });
    checkPods(claims, pods, out);
    return out;
  }

  /**
   * The pod rules. A claim allocated in the input keeps its allocation. A claim allocated in this
   * run was allocated together with all other claims of some pod that uses it (when any does), and
   * that pod can run: on one node that meets the pod's node name, node selector and required
   * affinity and that the node selector of every one of its claims allows, those allocated in the
   * input or for another pod (a shared claim) included, as kube-scheduler filters nodes.
   */
  private void checkPods(List<ResourceClaim> claims, List<Pod> pods, List<String> out) {
    Map<String, AllocationResult> allocation = new HashMap<>();
    for (ResourceClaim c : before) {
      allocation.put(key(c), c.getStatus().getAllocation());
    }
    Set<String> now = new java.util.LinkedHashSet<>();
    for (ResourceClaim c : claims) {
      AllocationResult a = c.getStatus() == null ? null : c.getStatus().getAllocation();
      AllocationResult was = allocation.get(key(c));
      if (was != null && !was.equals(a)) {
        out.add(key(c) + ": allocated before the run, but its allocation changed");
      } else if (a != null && was == null) {
        allocation.put(key(c), a);
        now.add(key(c));
      }
    }
    Map<String, List<String>> whyNot = new LinkedHashMap<>();
    for (String k : now) {
      List<String> reasons = new ArrayList<>();
      for (Pod pod : pods) {
        List<String> podClaims = claimKeys(pod);
        if (podClaims.contains(k)) {
          String why = podMisfit(pod, podClaims, allocation);
          if (why == null) {
            reasons = null;
            break;
          }
          reasons.add(why);
        }
      }
      if (reasons != null && !reasons.isEmpty()) {
        whyNot.put(k, reasons);
      }
    }
    new java.util.LinkedHashSet<>(whyNot.values().stream().flatMap(List::stream).toList())
        .forEach(out::add);
  }

  /** The keys of the claims a pod uses, templates as {@code <pod>-<entry>}. */
  private static List<String> claimKeys(Pod pod) {
    List<String> out = new ArrayList<>();
    if (pod.getSpec() == null || pod.getSpec().getResourceClaims() == null) {
      return out;
    }
    for (PodResourceClaim prc : pod.getSpec().getResourceClaims()) {
      String name =
          prc.getResourceClaimName() != null
              ? prc.getResourceClaimName()
              : pod.getMetadata().getName() + "-" + prc.getName();
      out.add(ns(pod.getMetadata().getNamespace()) + "/" + name);
    }
    return out;
  }

  /** Null when all the pod's claims are allocated and the pod can run with them, else why not. */
  private String podMisfit(
      Pod pod, List<String> podClaims, Map<String, AllocationResult> allocation) {
    String name = "pod " + pod.getMetadata().getName() + ": ";
    TreeSet<String> named = new TreeSet<>();
    List<NodeSelector> selectors = new ArrayList<>();
    for (String k : podClaims) {
      AllocationResult a = allocation.get(k);
      if (a == null) {
        return name + "claim " + k + " is not allocated, but others of the pod were";
      }
      String n = nodeName(a.getNodeSelector());
      if (n != null) {
        named.add(n);
      }
      if (a.getNodeSelector() != null) {
        selectors.add(a.getNodeSelector());
      }
    }
    if (named.size() > 1) {
      return name + "claims on different nodes " + named;
    }
    if (named.size() == 1 && !nodes.containsKey(named.first())) {
      return name + "node " + named.first() + " does not exist";
    }
    String misfit = null;
    for (Node node : new TreeMap<>(nodes).values()) {
      String why = podMisfit(pod, node);
      if (why == null && selectors.stream().allMatch(sel -> selects(sel, node))) {
        return null;
      }
      if (named.size() == 1 && named.first().equals(node.getMetadata().getName())) {
        misfit = why;
      }
    }
    return misfit != null
        ? name + "node " + named.first() + " " + misfit
        : name + "no node meets the pod's node constraints and its claims' node selectors";
  }

  private void checkClaim(
      ResourceClaim c,
      String node,
      Map<String, String> taken,
      Map<String, Map<String, Quantity>> shared,
      Set<String> counted,
      Map<String, Quantity> counters,
      List<String> out) {
    String claim = key(c);
    AllocationResult a = c.getStatus().getAllocation();
    List<DeviceRequestAllocationResult> results = results(c);
    if (results.size() > MAX_RESULTS) {
      out.add(claim + ": " + results.size() + " devices, more than " + MAX_RESULTS);
    }
    Map<String, List<Entry>> byRequest = new LinkedHashMap<>();
    Set<String> inClaim = new HashSet<>();
    for (DeviceRequestAllocationResult r : results) {
      String id = id(r);
      String where = claim + ": request " + r.getRequest() + ": device " + id;
      Entry e = devices.get(id);
      if (e == null) {
        out.add(where + " does not exist in the newest generation of its pool");
        continue;
      }
      if (!e.complete()) {
        out.add(where + " is in an incomplete pool");
      }
      String reach = reachable(e, node);
      if (reach != null) {
        out.add(where + " " + reach);
      } else if (node == null && a.getNodeSelector() == null && !everywhere(e)) {
        out.add(
            where
                + " is reachable from some nodes only, but the allocation has no node "
                + "selector");
      }
      if (Boolean.TRUE.equals(e.device().getBindsToNode()) && node == null) {
        out.add(where + " binds to a node, but the allocation names no node");
      }
      if (!list(e.device().getBindingConditions()).equals(list(r.getBindingConditions()))
          || !list(e.device().getBindingFailureConditions())
              .equals(list(r.getBindingFailureConditions()))) {
        out.add(
            where
                + " has binding conditions "
                + list(e.device().getBindingConditions())
                + " / failure conditions "
                + list(e.device().getBindingFailureConditions())
                + ", the result "
                + list(r.getBindingConditions())
                + " / "
                + list(r.getBindingFailureConditions()));
      }
      boolean multi = Boolean.TRUE.equals(e.device().getAllowMultipleAllocations());
      boolean admin = Boolean.TRUE.equals(r.getAdminAccess());
      if (multi) {
        if (r.getShareID() == null || r.getShareID().isEmpty()) {
          out.add(where + " allows multiple allocations but has no shareID");
        }
        if (!admin) {
          // an admin's share is not in use either: kube-scheduler's allocated state skips it
          addAll(shared.computeIfAbsent(id, k -> new HashMap<>()), r.getConsumedCapacity());
        }
      } else if (!admin) {
        String holder = taken.putIfAbsent(id, claim);
        if (holder != null) {
          out.add(where + " is already allocated to " + holder);
        }
      }
      if (!multi && !inClaim.add(id)) {
        out.add(where + " appears twice in the claim");
      }
      if (!admin && counted.add(id)) {
        consume(e, counters);
      }
      Spec spec = spec(c, r.getRequest());
      if (spec == null) {
        out.add(where + ": the claim has no such request");
        continue;
      }
      if (admin != spec.adminAccess()) {
        out.add(
            where
                + (admin
                    ? " has adminAccess, which the request does not ask for"
                    : " lacks adminAccess, which the request asks for"));
      }
      String mismatch = matches(spec, e);
      if (mismatch != null) {
        out.add(where + " " + mismatch);
      }
      String taint = untolerated(e.device(), spec.tolerations());
      if (taint != null) {
        out.add(where + " has taint " + taint + " that the request does not tolerate");
      }
      byRequest.computeIfAbsent(r.getRequest(), k -> new ArrayList<>()).add(e);
    }
    checkCounts(c, claim, node, a.getNodeSelector(), byRequest, out);
    checkConstraints(c, claim, byRequest, out);
  }

  private void checkShares(Map<String, Map<String, Quantity>> shared, List<String> out) {
    new TreeMap<>(shared)
        .forEach(
            (id, used) -> {
              Entry e = devices.get(id);
              if (e == null || e.device().getCapacity() == null) {
                return;
              }
              new TreeMap<>(used)
                  .forEach(
                      (name, q) -> {
                        var cap = e.device().getCapacity().get(name);
                        if (cap != null
                            && q.compareTo(Quantity.parse(cap.getValue().toString())) > 0) {
                          out.add(
                              "device "
                                  + id
                                  + ": capacity "
                                  + name
                                  + " exceeded: "
                                  + q
                                  + " consumed of "
                                  + cap.getValue());
                        }
                      });
            });
  }

  /** A request or subrequest as the checker needs it. */
  private record Spec(
      String topName,
      String fullName,
      String className,
      List<DeviceSelector> selectors,
      String mode,
      long count,
      List<DeviceToleration> tolerations,
      boolean firstAvailable,
      boolean adminAccess) {}

  private static Spec spec(ResourceClaim c, String resultName) {
    String[] parts = resultName.split("/", 2);
    for (DeviceRequest q : c.getSpec().getDevices().getRequests()) {
      if (!q.getName().equals(parts[0])) {
        continue;
      }
      if (q.getExactly() != null && parts.length == 1) {
        var e = q.getExactly();
        return new Spec(
            q.getName(),
            q.getName(),
            e.getDeviceClassName(),
            e.getSelectors(),
            e.getAllocationMode(),
            e.getCount() == null ? 1 : e.getCount(),
            e.getTolerations(),
            false,
            Boolean.TRUE.equals(e.getAdminAccess()));
      }
      if (q.getFirstAvailable() != null && parts.length == 2) {
        for (DeviceSubRequest s : q.getFirstAvailable()) {
          if (s.getName().equals(parts[1])) {
            return new Spec(
                q.getName(),
                resultName,
                s.getDeviceClassName(),
                s.getSelectors(),
                s.getAllocationMode(),
                s.getCount() == null ? 1 : s.getCount(),
                s.getTolerations(),
                true,
                false);
          }
        }
      }
    }
    return null;
  }

  /** Null when the device satisfies the class's and the request's selectors, else why not. */
  private String matches(Spec spec, Entry e) {
    DeviceClass cls = classes.get(spec.className());
    if (cls == null) {
      return "is of class " + spec.className() + ", which does not exist";
    }
    List<DeviceSelector> all = new ArrayList<>();
    if (cls.getSpec() != null && cls.getSpec().getSelectors() != null) {
      all.addAll(cls.getSpec().getSelectors());
    }
    if (spec.selectors() != null) {
      all.addAll(spec.selectors());
    }
    CelDevice view;
    try {
      view = CelDevice.of(e.driver(), e.device());
    } catch (IllegalArgumentException ex) {
      return "cannot be evaluated: " + ex.getMessage();
    }
    for (DeviceSelector s : all) {
      if (s.getCel() == null) {
        continue;
      }
      try {
        if (!cel.compile(s.getCel().getExpression()).matches(view)) {
          return "does not match selector " + s.getCel().getExpression();
        }
      } catch (CelSelectorException ex) {
        return "fails selector " + s.getCel().getExpression() + ": " + ex.getMessage();
      }
    }
    return null;
  }

  private void checkCounts(
      ResourceClaim c,
      String claim,
      String node,
      NodeSelector allocation,
      Map<String, List<Entry>> byRequest,
      List<String> out) {
    for (DeviceRequest q : c.getSpec().getDevices().getRequests()) {
      List<String> used =
          byRequest.keySet().stream()
              .filter(n -> n.equals(q.getName()) || n.startsWith(q.getName() + "/"))
              .toList();
      if (used.isEmpty()) {
        out.add(claim + ": request " + q.getName() + " got no devices");
        continue;
      }
      if (used.size() > 1) {
        out.add(
            claim + ": request " + q.getName() + " got devices for several subrequests " + used);
        continue;
      }
      Spec spec = spec(c, used.get(0));
      if (spec == null) {
        continue;
      }
      List<Entry> got = byRequest.get(used.get(0));
      if ("All".equals(spec.mode())) {
        Set<String> have = new HashSet<>();
        got.forEach(e -> have.add(e.id()));
        // Without a node name the allocation was made on some node its selector allows; every
        // device matching from that node belongs to All (devices of per-device node selection
        // too), so one such node must account for exactly these devices.
        List<String> candidates = new ArrayList<>();
        if (node != null) {
          candidates.add(node);
        } else {
          new TreeMap<>(nodes)
              .forEach(
                  (name, n) -> {
                    if (allocation == null || selects(allocation, n)) {
                      candidates.add(name);
                    }
                  });
        }
        Set<String> want = null;
        for (String n : candidates) {
          Set<String> w = allMatching(spec, n, null);
          if (want == null || w.equals(have)) {
            want = w;
          }
        }
        if (want == null) {
          Set<String> usedPools = new HashSet<>();
          got.forEach(e -> usedPools.add(e.driver() + "/" + e.pool()));
          want = allMatching(spec, null, usedPools);
        }
        if (!have.equals(want)) {
          out.add(
              claim
                  + ": request "
                  + used.get(0)
                  + " (All) got "
                  + new TreeSet<>(have)
                  + " but "
                  + new TreeSet<>(want)
                  + " match");
        }
      } else if (got.size() != spec.count()) {
        out.add(
            claim
                + ": request "
                + used.get(0)
                + " got "
                + got.size()
                + " devices, wants "
                + spec.count());
      }
    }
  }

  /** The devices {@code All} wants from this node, or (node null) from these pools. */
  private Set<String> allMatching(Spec spec, String node, Set<String> pools) {
    Set<String> want = new HashSet<>();
    for (Entry e : devices.values()) {
      boolean inScope =
          node != null ? reachable(e, node) == null : pools.contains(e.driver() + "/" + e.pool());
      if (inScope
          && matches(spec, e) == null
          && untolerated(e.device(), spec.tolerations()) == null) {
        want.add(e.id());
      }
    }
    return want;
  }

  private void checkConstraints(
      ResourceClaim c, String claim, Map<String, List<Entry>> byRequest, List<String> out) {
    List<DeviceConstraint> constraints = c.getSpec().getDevices().getConstraints();
    if (constraints == null) {
      return;
    }
    for (DeviceConstraint k : constraints) {
      List<String> names = k.getRequests() == null ? List.of() : k.getRequests();
      String attr =
          k.getMatchAttribute() != null ? k.getMatchAttribute() : k.getDistinctAttribute();
      if (attr == null) {
        continue;
      }
      List<Object> values = new ArrayList<>();
      List<String> ids = new ArrayList<>();
      byRequest.forEach(
          (request, entries) -> {
            String top = request.split("/", 2)[0];
            if (!names.isEmpty() && !names.contains(top) && !names.contains(request)) {
              return;
            }
            for (Entry e : entries) {
              values.add(attribute(e, attr));
              ids.add(e.id());
            }
          });
      if (values.contains(null)) {
        out.add(
            claim
                + ": constraint on "
                + attr
                + ": device "
                + ids.get(values.indexOf(null))
                + " lacks the attribute");
        continue;
      }
      if (k.getMatchAttribute() != null && new HashSet<>(values).size() > 1) {
        out.add(claim + ": matchAttribute " + attr + " violated by " + ids + ": " + values);
      }
      if (k.getDistinctAttribute() != null && new HashSet<>(values).size() < values.size()) {
        out.add(claim + ": distinctAttribute " + attr + " violated by " + ids + ": " + values);
      }
    }
  }

  /** The attribute's typed value (as a comparable string), exact key or bare id of the driver. */
  private static Object attribute(Entry e, String qualified) {
    Map<String, DeviceAttribute> attrs = e.device().getAttributes();
    if (attrs == null) {
      return null;
    }
    DeviceAttribute a = attrs.get(qualified);
    int slash = qualified.indexOf('/');
    if (a == null && slash > 0 && qualified.substring(0, slash).equals(e.driver())) {
      a = attrs.get(qualified.substring(slash + 1));
    }
    if (a == null) {
      return null;
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
    return null;
  }

  /** Null when the device can be used from the node, else why not. */
  private String reachable(Entry e, String node) {
    var spec = e.slice().getSpec();
    String local = spec.getNodeName();
    NodeSelector selector = spec.getNodeSelector();
    boolean all = Boolean.TRUE.equals(spec.getAllNodes());
    if (Boolean.TRUE.equals(spec.getPerDeviceNodeSelection())) {
      local = e.device().getNodeName();
      selector = e.device().getNodeSelector();
      all = Boolean.TRUE.equals(e.device().getAllNodes());
    }
    if (all) {
      return null;
    }
    if (local != null && !local.isEmpty()) {
      return local.equals(node)
          ? null
          : "is local to node " + local + ", the claim is for node " + node;
    }
    if (selector != null) {
      if (node == null) {
        return null; // the allocation's own node selector carries the restriction
      }
      Node n = nodes.get(node);
      return n != null && selects(selector, n) ? null : "is not reachable from node " + node;
    }
    return "is reachable from no node";
  }

  /** Whether the device is reachable from every node (its slice's or its own allNodes). */
  private static boolean everywhere(Entry e) {
    var spec = e.slice().getSpec();
    return Boolean.TRUE.equals(spec.getPerDeviceNodeSelection())
        ? Boolean.TRUE.equals(e.device().getAllNodes())
        : Boolean.TRUE.equals(spec.getAllNodes());
  }

  /** Null when the pod may run on the node (name, node selector, required affinity), else why. */
  static String podMisfit(Pod pod, Node node) {
    var spec = pod.getSpec();
    String name = node.getMetadata().getName();
    if (spec.getNodeName() != null
        && !spec.getNodeName().isEmpty()
        && !spec.getNodeName().equals(name)) {
      return "is not the pod's node name " + spec.getNodeName();
    }
    Map<String, String> labels =
        node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
    if (spec.getNodeSelector() != null) {
      for (var want : new TreeMap<>(spec.getNodeSelector()).entrySet()) {
        if (!want.getValue().equals(labels.get(want.getKey()))) {
          return "does not match the pod's node selector " + want.getKey() + "=" + want.getValue();
        }
      }
    }
    if (spec.getAffinity() != null
        && spec.getAffinity().getNodeAffinity() != null
        && spec.getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution()
            != null
        && !selects(
            spec.getAffinity()
                .getNodeAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution(),
            node)) {
      return "does not match the pod's required node affinity";
    }
    return null;
  }

  private static List<String> list(List<String> l) {
    return l == null ? List.of() : l;
  }

  private static boolean selects(NodeSelector selector, Node node) {
    for (NodeSelectorTerm t : selector.getNodeSelectorTerms()) {
      boolean ok = true;
      for (NodeSelectorRequirement r :
          t.getMatchExpressions() == null
              ? List.<NodeSelectorRequirement>of()
              : t.getMatchExpressions()) {
        String v =
            node.getMetadata().getLabels() == null
                ? null
                : node.getMetadata().getLabels().get(r.getKey());
        ok &=
            switch (r.getOperator()) {
              case "In" -> v != null && r.getValues().contains(v);
              case "NotIn" -> v == null || !r.getValues().contains(v);
              case "Exists" -> v != null;
              case "DoesNotExist" -> v == null;
              default -> false;
            };
      }
      for (NodeSelectorRequirement r :
          t.getMatchFields() == null ? List.<NodeSelectorRequirement>of() : t.getMatchFields()) {
        boolean in = r.getValues().contains(node.getMetadata().getName());
        ok &=
            "metadata.name".equals(r.getKey())
                && ("In".equals(r.getOperator()) ? in : "NotIn".equals(r.getOperator()) && !in);
      }
      if (ok) {
        return true;
      }
    }
    return false;
  }

  /** The node a result's selector names by {@code metadata.name}, or null. */
  static String nodeName(NodeSelector s) {
    if (s == null || s.getNodeSelectorTerms() == null) {
      return null;
    }
    for (NodeSelectorTerm t : s.getNodeSelectorTerms()) {
      if (t.getMatchFields() == null) {
        continue;
      }
      for (NodeSelectorRequirement r : t.getMatchFields()) {
        if ("metadata.name".equals(r.getKey())
            && r.getValues() != null
            && r.getValues().size() == 1) {
          return r.getValues().get(0);
        }
      }
    }
    return null;
  }

  /** The first NoSchedule/NoExecute taint no toleration matches, as text; null when none. */
  static String untolerated(Device d, List<DeviceToleration> tolerations) {
    if (d.getTaints() == null) {
      return null;
    }
    for (DeviceTaint t : d.getTaints()) {
      if (!"NoSchedule".equals(t.getEffect()) && !"NoExecute".equals(t.getEffect())) {
        continue;
      }
      boolean ok = false;
      for (DeviceToleration tol : tolerations == null ? List.<DeviceToleration>of() : tolerations) {
        boolean effect =
            tol.getEffect() == null
                || tol.getEffect().isEmpty()
                || tol.getEffect().equals(t.getEffect());
        boolean key =
            tol.getKey() == null || tol.getKey().isEmpty() || tol.getKey().equals(t.getKey());
        boolean value =
            "Exists".equals(tol.getOperator())
                || Objects.equals(
                    Objects.requireNonNullElse(tol.getValue(), ""),
                    Objects.requireNonNullElse(t.getValue(), ""));
        ok |= effect && key && value;
      }
      if (!ok) {
        return t.getKey() + "=" + t.getValue() + ":" + t.getEffect();
      }
    }
    return null;
  }

  private void consume(Entry e, Map<String, Quantity> counters) {
    if (e.device().getConsumesCounters() == null) {
      return;
    }
    for (DeviceCounterConsumption c : e.device().getConsumesCounters()) {
      if (c.getCounters() == null) {
        continue;
      }
      c.getCounters()
          .forEach(
              (name, q) ->
                  counters.merge(
                      e.driver() + "/" + e.pool() + "/" + c.getCounterSet() + "/" + name,
                      Quantity.parse(q.getValue().toString()),
                      Quantity::add));
    }
  }

  private Quantity capacityOfCounter(String key) {
    String[] p = key.split("/");
    List<ResourceSlice> pool = pools.get(p[0] + "/" + p[1]);
    if (pool == null) {
      return null;
    }
    for (ResourceSlice s : pool) {
      if (s.getSpec().getSharedCounters() == null) {
        continue;
      }
      for (CounterSet set : s.getSpec().getSharedCounters()) {
        if (set.getName().equals(p[2])
            && set.getCounters() != null
            && set.getCounters().containsKey(p[3])) {
          return Quantity.parse(set.getCounters().get(p[3]).getValue().toString());
        }
      }
    }
    return null;
  }

  private static void addAll(
      Map<String, Quantity> into, Map<String, io.fabric8.kubernetes.api.model.Quantity> add) {
    if (add != null) {
      add.forEach((k, v) -> into.merge(k, Quantity.parse(v.toString()), Quantity::add));
    }
  }

  private static List<DeviceRequestAllocationResult> results(ResourceClaim c) {
    if (c.getStatus() == null
        || c.getStatus().getAllocation() == null
        || c.getStatus().getAllocation().getDevices() == null
        || c.getStatus().getAllocation().getDevices().getResults() == null) {
      return List.of();
    }
    return c.getStatus().getAllocation().getDevices().getResults();
  }

  private static String id(DeviceRequestAllocationResult r) {
    return r.getDriver() + "/" + r.getPool() + "/" + r.getDevice();
  }

  private static String key(ResourceClaim c) {
    return ns(c.getMetadata().getNamespace()) + "/" + c.getMetadata().getName();
  }

  private static String ns(String ns) {
    return ns == null ? "default" : ns;
  }
}
