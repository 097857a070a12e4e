package io.kdra.it.sched;

import io.kdra.claimcontroller.domain.VolumeFilters;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Compares two answers to one scheduling question, node by node: kube-scheduler's (the first plugin
 * that rejected the node and its reasons, or feasible) and ours ({@code NodeFilter}'s reason, or
 * feasible). They agree on a node when both find it feasible, or both reject it with the same
 * plugin and our reason is one of upstream's (NodeResourcesFit lists every insufficient resource,
 * we name the first). Pure.
 */
public final class FilterVerdicts {

  private FilterVerdicts() {}

  /**
   * kube-scheduler's verdict on one node.
   *
   * @param plugin the plugin that rejected it; empty: feasible
   * @param reasons its reasons
   */
  public record Upstream(String plugin, List<String> reasons) {
    public static final Upstream FEASIBLE = new Upstream("", List.of());

    public boolean feasible() {
      return plugin.isEmpty();
    }
  }

  /** The plugin our reason stands for, by the reason texts (upstream's own). */
  public static String pluginOf(String ourReason) {
    if (ourReason.equals("node(s) didn't match the requested node name")
        || ourReason.equals("node(s) didn't satisfy plugin(s) [NodeName]")) {
      return "NodeName";
    }
    if (ourReason.startsWith("node(s) didn't satisfy plugin(s) [NodeAffinity NodeName]")) {
      return "NodeAffinity,NodeName";
    }
    if (ourReason.equals("node(s) were unschedulable")) {
      return "NodeUnschedulable";
    }
    if (ourReason.startsWith("node(s) had untolerated taint")) {
      return "TaintToleration";
    }
    if (ourReason.equals("node(s) didn't match Pod's node affinity/selector")
        || ourReason.equals("node(s) didn't satisfy plugin(s) [NodeAffinity]")
        || ourReason.equals("pod affinity terms conflict")) {
      return "NodeAffinity";
    }
    if (ourReason.equals("node(s) didn't have free ports for the requested pod ports")) {
      return "NodePorts";
    }
    if (ourReason.startsWith("Insufficient ") || ourReason.equals("Too many pods")) {
      return "NodeResourcesFit";
    }
    if (ourReason.startsWith("node(s) didn't match pod topology spread constraints")) {
      return "PodTopologySpread";
    }
    if (ourReason.startsWith("node(s) didn't match pod affinity rules")
        || ourReason.startsWith("node(s) didn't match pod anti-affinity rules")
        || ourReason.startsWith("node(s) didn't satisfy existing pods anti-affinity rules")) {
      return "InterPodAffinity";
    }
    String volumes = volumePluginOf(ourReason);
    if (volumes != null) {
      return volumes;
    }
    return "kdra:" + ourReason; // a reason of ours that upstream has no plugin for
  }

  /** The volume plugin a reason (a PreFilter's or a Filter's) is upstream's text of, or null. */
  private static String volumePluginOf(String r) {
    if (r.equals(VolumeFilters.REASON_RWOP_CONFLICT)
        || r.equals(VolumeFilters.REASON_DISK_CONFLICT)
        || (r.startsWith("persistentvolumeclaim \"") && r.endsWith("\" not found"))) {
      return "VolumeRestrictions";
    }
    if (r.equals(VolumeFilters.REASON_MAX_VOLUME_COUNT)) {
      return "NodeVolumeLimits";
    }
    if (r.equals(VolumeFilters.REASON_NODE_CONFLICT)
        || r.equals(VolumeFilters.REASON_BIND_CONFLICT)
        || r.equals(VolumeFilters.REASON_NOT_ENOUGH_SPACE)
        || r.equals(VolumeFilters.REASON_PV_NOT_EXIST)
        || r.equals(VolumeFilters.REASON_UNBOUND_IMMEDIATE)
        || r.startsWith("waiting for ephemeral volume controller")
        || r.endsWith("\" is being deleted")
        || r.contains("\" bound to non-existent persistentvolume \"")
        || r.endsWith("(pod is not owner)")
        || r.startsWith("VolumeBindingMode not set for StorageClass")) {
      return "VolumeBinding";
    }
    if (r.equals(VolumeFilters.REASON_ZONE_CONFLICT)
        || r.startsWith("persistentvolume \"")
        || r.startsWith("storageclass.storage.k8s.io \"")
        || r.equals("PersistentVolume had no name")
        || r.equals("PersistentVolumeClaim had no pv name and storageClass name")) {
      return "VolumeZone";
    }
    return null;
  }

  /**
   * One node where the answers differ.
   *
   * @param node its name
   * @param upstream kube-scheduler's verdict
   * @param ours our reason; empty: feasible
   * @param feasibility whether the answers differ on feasibility (not only on the reason)
   */
  public record Disagreement(
      String node, Upstream upstream, Optional<String> ours, boolean feasibility) {

    @Override
    public String toString() {
      return node
          + ": upstream "
          + (upstream.feasible() ? "feasible" : upstream.plugin() + " " + upstream.reasons())
          + ", kdra "
          + ours.map(r -> pluginOf(r) + " [" + r + "]").orElse("feasible");
    }
  }

  /**
   * The nodes on which the answers differ, sorted by node name.
   *
   * @param upstream node name to kube-scheduler's verdict
   * @param ours node name to our reason, for the nodes we reject (absent: feasible)
   */
  public static List<Disagreement> compare(
      Map<String, Upstream> upstream, Map<String, String> ours) {
    List<Disagreement> out = new ArrayList<>();
    TreeSet<String> nodes = new TreeSet<>(upstream.keySet());
    nodes.addAll(ours.keySet());
    for (String node : nodes) {
      Upstream theirs = upstream.getOrDefault(node, Upstream.FEASIBLE);
      Optional<String> mine = Optional.ofNullable(ours.get(node));
      if (theirs.feasible() != mine.isEmpty()) {
        out.add(new Disagreement(node, theirs, mine, true));
      } else if (mine.isPresent()
          && !(pluginOf(mine.get()).equals(theirs.plugin())
              && theirs.reasons().contains(mine.get()))) {
        out.add(new Disagreement(node, theirs, mine, false));
      }
    }
    return out;
  }
}
