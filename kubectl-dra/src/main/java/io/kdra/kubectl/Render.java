package io.kdra.kubectl;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.alloc.RequestReport;
import java.util.ArrayList;
import java.util.List;

/** The answers as text: a few lines of prose, then tables as kubectl prints them. Pure. */
final class Render {

  private Render() {}

  static List<String> pod(Pod pod, PodWhy.Answer a) {
    List<String> out = new ArrayList<>();
    String name = "pod/" + pod.getMetadata().getName();
    out.add(
        switch (a.state()) {
          case BOUND -> name + " is scheduled: on node " + a.node();
          case WAITING -> name + " is pending: it waits for its claims";
          case UNSCHEDULABLE -> name + " is pending: it cannot be scheduled now";
          case FITS ->
              name
                  + " is pending, but it would fit now on node "
                  + a.node()
                  + " (the claim-controller places it at its next try)";
        });
    String scheduler = pod.getSpec() == null ? null : pod.getSpec().getSchedulerName();
    out.add("Scheduler:  " + (scheduler == null ? "default-scheduler" : scheduler));
    PodCondition c = scheduled(pod);
    if (c != null && !"True".equals(c.getStatus())) {
      out.add(
          "Condition:  PodScheduled="
              + c.getStatus()
              + (c.getReason() == null ? "" : " (" + c.getReason() + ")")
              + (c.getMessage() == null ? "" : ": " + c.getMessage()));
    }
    String nominated = pod.getStatus() == null ? null : pod.getStatus().getNominatedNodeName();
    if (nominated != null && !nominated.isEmpty() && a.state() != PodWhy.State.BOUND) {
      // set by the controller's preemption; the condition above says whom it preempted
      out.add(
          "Nominated:  "
              + nominated
              + " (it preempted pods of lower priority there; what they free is kept for it)");
    }
    if (!a.message().isEmpty()) {
      out.add("Why, now:   " + a.message());
    }
    out.addAll(claims(a.claims()));
    out.addAll(requests(a.requests()));
    out.addAll(nodes(a.nodes()));
    return out;
  }

  static List<String> claim(ResourceClaim claim, ClaimWhy.Answer a) {
    List<String> out = new ArrayList<>();
    String name = "resourceclaim/" + claim.getMetadata().getName();
    switch (a.state()) {
      case ALLOCATED -> {
        out.add(name + " is allocated: on " + Words.where(a.allocation()));
        out.add("Devices:       " + Words.devices(a.allocation()));
        out.add(
            "Reserved for:  "
                + (a.reservedFor().isEmpty() ? "<none>" : String.join(", ", a.reservedFor())));
      }
      case PENDING_POD -> {
        out.add(name + " is pending: pod " + a.pod() + " waits for it");
        out.add("Why, now:      " + a.message());
      }
      case UNUSED -> {
        out.add(name + " is pending");
        out.add("Why, now:      " + a.message());
      }
    }
    out.add(
        "Used by:       "
            + (a.users().isEmpty()
                ? "<none>"
                : String.join(", ", a.users().stream().map(u -> "pod/" + u).toList())));
    if (a.podAnswer() != null) {
      out.addAll(requests(a.podAnswer().requests()));
      out.addAll(nodes(a.podAnswer().nodes()));
    }
    return out;
  }

  static List<String> devices(List<DeviceRows.Row> rows) {
    Table t = new Table("NODE", "DRIVER", "POOL", "DEVICE", "CLASSES", "CLAIM", "TAINTS");
    for (DeviceRows.Row r : rows) {
      t.row(
          r.node(),
          r.driver(),
          r.pool(),
          r.device(),
          String.join(",", r.classes()),
          String.join(",", r.claims()),
          String.join(",", r.taints()));
    }
    return t.isEmpty() ? List.of("No devices published (no ResourceSlices).") : t.lines();
  }

  static List<String> whatIf(List<WhatIfRun.Row> rows) {
    Table t = new Table("OBJECT", "FITS", "NODE", "DEVICES, OR WHY NOT");
    for (WhatIfRun.Row r : rows) {
      t.row(r.object(), r.fits() ? "yes" : "no", r.node() == null ? "-" : r.node(), r.detail());
    }
    return t.isEmpty() ? List.of("The manifest has no pods and no ResourceClaims.") : t.lines();
  }

  private static List<String> claims(List<ResourceClaim> claims) {
    if (claims.isEmpty()) {
      return List.of();
    }
    Table t = new Table("CLAIM", "STATE", "DEVICES");
    for (ResourceClaim c : claims) {
      boolean allocated = PodWhy.allocated(c);
      t.row(
          c.getMetadata().getName(),
          allocated ? "allocated" : "pending",
          allocated ? Words.devices(c.getStatus().getAllocation()) : "-");
    }
    return blankThen(t.lines());
  }

  /** Per request: the allocator's counts over all nodes tried. */
  static List<String> requests(List<PodWhy.RequestRow> rows) {
    if (rows.isEmpty()) {
      return List.of();
    }
    Table t =
        new Table(
            "CLAIM", "REQUEST", "CLASS", "NEEDED", "IN CLASS", "MATCHING", "FREE", "NOT FREE");
    for (PodWhy.RequestRow row : rows) {
      RequestReport r = row.report();
      t.row(
          row.claim(),
          r.request(),
          r.deviceClass(),
          r.all() ? "all" : Long.toString(r.needed()),
          Integer.toString(r.inClass()),
          r.filtered() ? Integer.toString(r.matching()) : "-",
          Integer.toString(r.free()),
          notFree(r));
    }
    return blankThen(t.lines());
  }

  private static String notFree(RequestReport r) {
    List<String> why = new ArrayList<>();
    if (r.allocatedToOthers() > 0) {
      why.add(r.allocatedToOthers() + " allocated");
    }
    if (r.tainted() > 0) {
      why.add(r.tainted() + " tainted (" + r.blockingTaint() + ")");
    }
    if (r.noCounters() > 0) {
      why.add(r.noCounters() + " no counters");
    }
    if (r.noCapacity() > 0) {
      why.add(r.noCapacity() + " no capacity");
    }
    return why.isEmpty() ? "-" : String.join(", ", why);
  }

  /** Per node tried: the node filter's reason, or the allocator's answer on that node. */
  static List<String> nodes(List<PodWhy.NodeRow> rows) {
    if (rows.isEmpty()) {
      return List.of();
    }
    Table t = new Table("NODE", "RESULT");
    rows.forEach(r -> t.row(r.node(), r.result()));
    return blankThen(t.lines());
  }

  private static List<String> blankThen(List<String> lines) {
    List<String> out = new ArrayList<>();
    out.add("");
    out.addAll(lines);
    return out;
  }

  private static PodCondition scheduled(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return null;
    }
    return pod.getStatus().getConditions().stream()
        .filter(c -> "PodScheduled".equals(c.getType()))
        .findFirst()
        .orElse(null);
  }
}
