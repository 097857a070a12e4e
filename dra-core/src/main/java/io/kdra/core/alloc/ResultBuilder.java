package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.kdra.core.model.NewerFields;
import io.kdra.core.model.Quantity;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns a successful search into upstream-shaped {@link AllocationResult}s: one result entry per
 * picked device ({@code req} or {@code req/sub}, driver, pool, device, {@code adminAccess} only
 * when true, tolerations, share ID and consumed capacity for shares, binding conditions when that
 * feature is on; {@code skipNodeOperations} as the slice has it, as the experimental allocator
 * copies it); configuration from each used class ({@code FromClass}, naming the requests that used
 * it) then from the claim ({@code FromClaim}, when it applies to an allocated request); and the
 * node selector upstream writes.
 */
final class ResultBuilder {

  private ResultBuilder() {}

  static AllocationResult build(
      ClaimPlan claim, List<Search.Pick> picks, String nodeName, AllocatorFeatures features) {
    List<DeviceRequestAllocationResult> results = new ArrayList<>();
    for (Search.Pick p : picks) {
      RequestSpec spec = p.request().spec();
      DeviceRequestAllocationResultBuilder b =
          new DeviceRequestAllocationResultBuilder()
              .withRequest(spec.resultName())
              .withDriver(p.device().id().driver())
              .withPool(p.device().id().pool())
              .withDevice(p.device().id().device());
      if (spec.adminAccess()) {
        b.withAdminAccess(true);
      }
      if (!spec.tolerations().isEmpty()) {
        b.withTolerations(spec.tolerations());
      }
      if (p.shareId() != null) {
        b.withShareID(p.shareId());
        Map<String, io.fabric8.kubernetes.api.model.Quantity> consumed = new TreeMap<>();
        for (Map.Entry<String, Quantity> e : p.consumed().entrySet()) {
          consumed.put(e.getKey(), Quantities.toApi(e.getValue()));
        }
        if (!consumed.isEmpty()) {
          b.withConsumedCapacity(consumed);
        }
      }
      var dev = p.device().device();
      if (features.bindingConditions() && p.device().hasBindingConditions()) {
        b.withBindingConditions(dev.getBindingConditions());
        if (dev.getBindingFailureConditions() != null) {
          b.withBindingFailureConditions(dev.getBindingFailureConditions());
        }
      }
      DeviceRequestAllocationResult result = b.build();
      if (features.experimental()) {
        // upstream's experimental allocator copies it; a device is picked only where allowed
        NewerFields.setSkipNodeOperations(result, p.device().slice().skipNodeOperations());
      }
      results.add(result);
    }
    DeviceAllocationResult devices = new DeviceAllocationResult();
    devices.setResults(results);
    devices.setConfig(configs(claim));
    AllocationResult result = new AllocationResult();
    result.setDevices(devices);
    result.setNodeSelector(nodeSelector(picks, nodeName));
    return result;
  }

  private static List<DeviceAllocationConfiguration> configs(ClaimPlan claim) {
    List<DeviceAllocationConfiguration> out = new ArrayList<>();
    Map<String, List<DeviceAllocationConfiguration>> byClass = new LinkedHashMap<>();
    for (ClaimPlan.RequestPlan plan : claim.requests) {
      RequestData rd = plan.alternatives.get(plan.selected);
      String className = rd.deviceClass().getMetadata().getName();
      List<DeviceAllocationConfiguration> existing = byClass.get(className);
      if (existing != null) {
        existing.forEach(c -> c.getRequests().add(rd.spec().resultName()));
        continue;
      }
      List<DeviceAllocationConfiguration> added = new ArrayList<>();
      List<DeviceClassConfiguration> cfgs =
          rd.deviceClass().getSpec() == null ? null : rd.deviceClass().getSpec().getConfig();
      if (cfgs != null) {
        for (DeviceClassConfiguration cfg : cfgs) {
          DeviceAllocationConfiguration c = new DeviceAllocationConfiguration();
          c.setSource("FromClass");
          c.setRequests(new ArrayList<>(List.of(rd.spec().resultName())));
          c.setOpaque(cfg.getOpaque());
          added.add(c);
        }
      }
      out.addAll(added);
      byClass.put(className, added);
    }
    List<DeviceClaimConfiguration> claimConfigs = claim.claim.getSpec().getDevices().getConfig();
    if (claimConfigs != null) {
      for (DeviceClaimConfiguration cfg : claimConfigs) {
        if (appliesToAllocated(cfg.getRequests(), claim)) {
          DeviceAllocationConfiguration c = new DeviceAllocationConfiguration();
          c.setSource("FromClaim");
          c.setRequests(
              cfg.getRequests() == null ? new ArrayList<>() : new ArrayList<>(cfg.getRequests()));
          c.setOpaque(cfg.getOpaque());
          out.add(c);
        }
      }
    }
    for (DeviceAllocationConfiguration c : out) {
      if (appliesToAllRequests(c.getRequests(), claim)) {
        c.setRequests(null);
      }
    }
    return out;
  }

  /**
   * Whether the named requests cover every request of the claim (by name, or a firstAvailable
   * request by its chosen {@code request/subrequest}): upstream 1.37 then leaves the names out,
   * which means "all requests".
   */
  private static boolean appliesToAllRequests(List<String> requests, ClaimPlan claim) {
    if (requests == null || requests.isEmpty()) {
      return false;
    }
    for (ClaimPlan.RequestPlan plan : claim.requests) {
      boolean named =
          requests.contains(plan.request.getName())
              || (plan.firstAvailable
                  && requests.contains(plan.alternatives.get(plan.selected).spec().resultName()));
      if (!named) {
        return false;
      }
    }
    return true;
  }

  private static boolean appliesToAllocated(List<String> requests, ClaimPlan claim) {
    if (requests == null || requests.isEmpty()) {
      return true;
    }
    for (ClaimPlan.RequestPlan plan : claim.requests) {
      if (requests.contains(plan.request.getName())) {
        return true;
      }
      if (plan.firstAvailable
          && requests.contains(plan.alternatives.get(plan.selected).spec().resultName())) {
        return true;
      }
    }
    return false;
  }

  /**
   * {@code metadata.name In [node]} when any device is node-local (slice or per-device {@code
   * nodeName}) or binds to the node; otherwise the single terms of all used node selectors merged
   * into one term without duplicates; null (usable everywhere) when nothing restricts it.
   */
  static NodeSelector nodeSelector(List<Search.Pick> picks, String nodeName) {
    List<NodeSelectorRequirement> fields = new ArrayList<>();
    List<NodeSelectorRequirement> exprs = new ArrayList<>();
    for (Search.Pick p : picks) {
      CandidateDevice d = p.device();
      SliceInfo s = d.slice();
      String local;
      NodeSelector selector;
      if (s.perDeviceNodeSelection()) {
        local = d.device().getNodeName();
        selector = d.device().getNodeSelector();
      } else {
        local = s.nodeName();
        selector = s.nodeSelector();
      }
      if ((local != null && !local.isEmpty()) || d.bindsToNode()) {
        return new NodeSelectorBuilder()
            .addNewNodeSelectorTerm()
            .addToMatchFields(
                new NodeSelectorRequirementBuilder()
                    .withKey("metadata.name")
                    .withOperator("In")
                    .withValues(nodeName)
                    .build())
            .endNodeSelectorTerm()
            .build();
      }
      if (selector != null
          && selector.getNodeSelectorTerms() != null
          && !selector.getNodeSelectorTerms().isEmpty()) {
        NodeSelectorTerm term = selector.getNodeSelectorTerms().get(0);
        addNew(term.getMatchFields(), fields);
        addNew(term.getMatchExpressions(), exprs);
      }
    }
    if (fields.isEmpty() && exprs.isEmpty()) {
      return null;
    }
    NodeSelectorTerm term = new NodeSelectorTerm();
    term.setMatchExpressions(exprs);
    term.setMatchFields(fields);
    return new NodeSelectorBuilder().withNodeSelectorTerms(term).build();
  }

  private static void addNew(List<NodeSelectorRequirement> from, List<NodeSelectorRequirement> to) {
    if (from == null) {
      return;
    }
    for (NodeSelectorRequirement r : from) {
      if (!to.contains(r)) {
        to.add(r);
      }
    }
  }
}
