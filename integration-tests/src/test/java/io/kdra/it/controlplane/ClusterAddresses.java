package io.kdra.it.controlplane;

/**
 * The address plan of one multi-node test cluster ({@code nodes.MultiNodeCluster}), from its slot
 * (held by a file lock, so that concurrent runs on one machine never share addresses): only
 * documentation and benchmark ranges, never the machine's own networks.
 *
 * <ul>
 *   <li>nodes: a /28 of 198.51.100.0/24 (TEST-NET-2); its first address is the host's end of the
 *       cluster's bridge, where the API server listens; nodes take the next ones;
 *   <li>pods: a /24 of 198.18.0.0/15 (RFC 2544) per node, all of a cluster's in one /20;
 *   <li>Services: 10.96.0.0/16, which exists only in the nodes' own network namespaces
 *       (kube-proxy's rules), so clusters on one machine may share it.
 * </ul>
 */
public record ClusterAddresses(int slot) {

  /** Slots on one machine: 198.51.100.0/24 holds 16 /28s. */
  public static final int SLOTS = 16;

  /** Nodes per cluster: a /28 has 14 hosts, the bridge takes one. */
  public static final int MAX_NODES = 13;

  static final String SERVICE_CIDR = "10.96.0.0/16";

  /** The {@code kubernetes} Service's address: the range's first. */
  public static final String KUBERNETES_SERVICE_IP = "10.96.0.1";

  /** The cluster DNS Service's address (the kubelets' {@code clusterDNS}). */
  public static final String DNS_SERVICE_IP = "10.96.0.10";

  public ClusterAddresses {
    if (slot < 0 || slot >= SLOTS) {
      throw new IllegalArgumentException("slot " + slot + " is not in [0, " + SLOTS + ")");
    }
  }

  /** The host's end of the bridge: the nodes' gateway, the API server's address. */
  public String gateway() {
    return "198.51.100." + (slot * 16 + 1);
  }

  /** The nodes' network's prefix length. */
  public int nodePrefixLength() {
    return 28;
  }

  public String nodeIp(int node) {
    checkNode(node);
    return "198.51.100." + (slot * 16 + 2 + node);
  }

  /** The pods of node {@code node}: a /24. */
  public String podCidr(int node) {
    checkNode(node);
    return "198.18." + (slot * 16 + node) + ".0/24";
  }

  /** Every pod of the cluster: kube-proxy's {@code clusterCIDR}. */
  public String clusterCidr() {
    return "198.18." + (slot * 16) + ".0/20";
  }

  /** The bridge on the host that joins the nodes; IFNAMSIZ allows 15 characters. */
  public String bridge() {
    return "kdramn" + slot;
  }

  /** The host's end of node {@code node}'s veth (the other end is the node's eth0). */
  public String hostVeth(int node) {
    checkNode(node);
    return "kdramn" + slot + "v" + node;
  }

  private static void checkNode(int node) {
    if (node < 0 || node >= MAX_NODES) {
      throw new IllegalArgumentException("node " + node + " is not in [0, " + MAX_NODES + ")");
    }
  }
}
