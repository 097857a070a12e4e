package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * kube-scheduler's NodePorts filter: a node is rejected when a host port the pod asks for is taken
 * there by a pod already placed on it. Ports are read as upstream's {@code util.GetHostPorts} reads
 * them (containers, and init containers with {@code restartPolicy: Always}, host port above zero)
 * and compared as its {@code HostPortInfo.CheckConflict} compares them: an empty host IP is {@code
 * 0.0.0.0}, an empty protocol TCP, and {@code 0.0.0.0} conflicts with every IP. Pure.
 */
public final class NodePorts {

  /** Upstream's {@code ErrReason}. */
  public static final String REASON = "node(s) didn't have free ports for the requested pod ports";

  static final String ALL_IPS = "0.0.0.0";

  /** No port asked for: every node passes (upstream's PreFilter Skip). */
  public static final NodePorts NONE = new NodePorts(List.of(), Map.of());

  private record ProtocolPort(String protocol, int port) {}

  private record HostPort(String ip, ProtocolPort pp) {
    static HostPort of(ContainerPort p) {
      String ip = p.getHostIP() == null || p.getHostIP().isEmpty() ? ALL_IPS : p.getHostIP();
      String protocol =
          p.getProtocol() == null || p.getProtocol().isEmpty() ? "TCP" : p.getProtocol();
      return new HostPort(ip, new ProtocolPort(protocol, p.getHostPort()));
    }
  }

  private final List<HostPort> wanted;

  /** Node name to IP to the protocol/ports used there. */
  private final Map<String, Map<String, Set<ProtocolPort>>> used;

  private NodePorts(List<HostPort> wanted, Map<String, Map<String, Set<ProtocolPort>>> used) {
    this.wanted = wanted;
    this.used = used;
  }

  /**
   * The PreFilter: the pod's host ports and, only when it has some, the ports each node's placed
   * pods use.
   *
   * @param placed the pods bound (or being bound) to a node, not terminal, not the pod itself
   */
  public static NodePorts prefilter(Pod pod, Collection<Pod> placed) {
    List<ContainerPort> mine = hostPorts(pod);
    if (mine.isEmpty()) {
      return NONE;
    }
    Map<String, Map<String, Set<ProtocolPort>>> used = new HashMap<>();
    for (Pod p : placed) {
      for (ContainerPort cp : hostPorts(p)) {
        HostPort hp = HostPort.of(cp);
        used.computeIfAbsent(p.getSpec().getNodeName(), n -> new HashMap<>())
            .computeIfAbsent(hp.ip(), i -> new HashSet<>())
            .add(hp.pp());
      }
    }
    return new NodePorts(mine.stream().map(HostPort::of).toList(), used);
  }

  /** The Filter: the reason the node is rejected, if it is. */
  public Optional<String> reject(Node node) {
    if (wanted.isEmpty()) {
      return Optional.empty();
    }
    Map<String, Set<ProtocolPort>> onNode = used.get(node.getMetadata().getName());
    if (onNode == null) {
      return Optional.empty();
    }
    for (HostPort w : wanted) {
      if (conflicts(onNode, w)) {
        return Optional.of(REASON);
      }
    }
    return Optional.empty();
  }

  private static boolean conflicts(Map<String, Set<ProtocolPort>> onNode, HostPort w) {
    if (ALL_IPS.equals(w.ip())) {
      return onNode.values().stream().anyMatch(s -> s.contains(w.pp()));
    }
    for (String ip : List.of(ALL_IPS, w.ip())) {
      Set<ProtocolPort> s = onNode.get(ip);
      if (s != null && s.contains(w.pp())) {
        return true;
      }
    }
    return false;
  }

  /** Upstream's {@code GetHostPorts}: the ports with a host port the pod holds while it runs. */
  public static List<ContainerPort> hostPorts(Pod pod) {
    List<ContainerPort> ports = new ArrayList<>();
    if (pod.getSpec() == null) {
      return ports;
    }
    if (pod.getSpec().getInitContainers() != null) {
      for (Container c : pod.getSpec().getInitContainers()) {
        if ("Always".equals(c.getRestartPolicy())) {
          addHostPorts(c, ports);
        }
      }
    }
    if (pod.getSpec().getContainers() != null) {
      for (Container c : pod.getSpec().getContainers()) {
        addHostPorts(c, ports);
      }
    }
    return ports;
  }

  private static void addHostPorts(Container c, List<ContainerPort> into) {
    if (c.getPorts() == null) {
      return;
    }
    for (ContainerPort p : c.getPorts()) {
      if (p.getHostPort() != null && p.getHostPort() > 0) {
        into.add(p);
      }
    }
  }
}
