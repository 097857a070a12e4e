package io.kdra.it.demo;

import io.kdra.it.karpenter.ScaleOutScenario;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The text {@code bin/demo} prints (the demo's user-visible contract, tested by {@code
 * DemoReportTest} and {@code DemoIT}): the table of pods, the services' ports and how to reach the
 * cluster with kubectl. Pure formatting of what {@link Demo} read.
 */
public final class DemoReport {
  private DemoReport() {}

  public static final String HEADER =
      String.format(
          "%-16s %-8s %-8s %s",
          "POD",
          "NODE",
          "STATUS",
          "DEVICES (request: pool/device), CDI ids, what the container saw; or why it is pending");

  /** Where the lines under a pod's first start: below the DEVICES column. */
  private static final String INDENT = " ".repeat(16 + 1 + 8 + 1 + 8 + 1);

  /** The width the lines of what a container saw wrap at. */
  static final int WIDTH = 100;

  /** The one line said when the demo falls back to the test kubelet because it is not root. */
  public static final String NOT_ROOT =
      "[demo] not root, so test kubelets instead of real nodes (those"
          + " need root for their mount namespaces, cgroups and containerd; --test-kubelet chooses"
          + " test kubelets explicitly)";

  /**
   * What the demo says about its nodes before it starts: only the fall-back to test kubelets when
   * not root, which the user did not ask for; null otherwise.
   */
  static String nodesChoice(boolean testKubeletAsked, boolean root) {
    return !testKubeletAsked && !root ? NOT_ROOT : null;
  }

  /** Said instead of the kubectl lines with {@code --once}: the cluster is gone right after. */
  public static final String ONCE =
      "--once: everything stops now; run bin/demo without --once to use"
          + " kubectl against the cluster";

  /**
   * One pod of the report.
   *
   * @param pod namespace/name
   * @param node the node it is bound to, or null
   * @param status the pod's phase, or a container's waiting reason (e.g. ErrImageNeverPull)
   * @param devices per claim request: {@code request: pool/device, ...}
   * @param cdiIds the CDI device ids the node's runtime applies (empty when not prepared)
   * @param seen what the container printed of its CDI edits (env vars, device nodes); null when no
   *     container runs (the test kubelet)
   * @param why a pending pod's PodScheduled reason and message, else null
   */
  record PodLine(
      String pod,
      String node,
      String status,
      List<String> devices,
      List<String> cdiIds,
      List<String> seen,
      String why) {

    static PodLine pending(String pod, String why) {
      return new PodLine(pod, null, "Pending", List.of(), List.of(), null, why);
    }
  }

  /** A service process and its one HTTP port (health, metrics, and gRPC where it serves it). */
  record Service(String name, int port) {}

  static List<String> pods(List<PodLine> pods) {
    List<String> lines = new ArrayList<>();
    lines.add(HEADER);
    for (PodLine p : pods) {
      String first = p.why() != null ? p.why() : String.join(", ", p.devices());
      lines.add(
          String.format(
                  "%-16s %-8s %-8s %s",
                  p.pod(), p.node() == null ? "-" : p.node(), p.status(), first)
              .stripTrailing());
      if (p.node() == null) {
        continue;
      }
      lines.add(
          INDENT
              + "CDI "
              + (p.cdiIds().isEmpty() ? "not prepared" : String.join(", ", p.cdiIds())));
      if (p.seen() != null) {
        lines.addAll(
            wrapped(
                INDENT + "saw ",
                p.seen().isEmpty() ? List.of("nothing of its devices yet") : p.seen()));
      }
    }
    return lines;
  }

  /** {@code items} after {@code prefix}, space-separated, in lines of at most {@link #WIDTH}. */
  private static List<String> wrapped(String prefix, List<String> items) {
    List<String> lines = new ArrayList<>();
    StringBuilder line = new StringBuilder(prefix);
    String continued = " ".repeat(prefix.length());
    for (String item : items) {
      boolean empty = line.length() == prefix.length();
      if (!empty && line.length() + 1 + item.length() > WIDTH) {
        lines.add(line.toString());
        line = new StringBuilder(continued);
        empty = true;
      }
      line.append(empty ? "" : " ").append(item);
    }
    lines.add(line.toString());
    return lines;
  }

  /**
   * What a container printed ({@code env}, then {@code ls /dev}) that came from its CDI edits: the
   * env vars whose names the specs set, in the container's order, then the specs' device nodes that
   * its {@code /dev} lists (device nodes directly in /dev: {@code ls} lists no deeper).
   */
  static List<String> seenThroughCdi(
      List<String> containerLog, Set<String> envNames, Set<String> deviceNodes) {
    Set<String> seen = new LinkedHashSet<>();
    for (String line : containerLog) {
      int eq = line.indexOf('=');
      if (eq > 0 && envNames.contains(line.substring(0, eq))) {
        seen.add(line);
      }
    }
    Set<String> listed = new LinkedHashSet<>(containerLog);
    for (String node : deviceNodes) {
      Path p = Path.of(node);
      if (p.getParent() != null
          && p.getParent().equals(Path.of("/dev"))
          && listed.contains(p.getFileName().toString())) {
        seen.add(node);
      }
    }
    return List.copyOf(seen);
  }

  static List<String> services(List<Service> services) {
    List<String> lines = new ArrayList<>();
    lines.add("Services (each on one port: metrics at /q/metrics, health at /q/health):");
    for (Service s : services) {
      lines.add(String.format("  %-28s http://127.0.0.1:%d", s.name(), s.port()));
    }
    return lines;
  }

  /**
   * How to reach the cluster with kubectl: only while the demo keeps running (with {@code --once}
   * the kubeconfig is deleted right after). Names the kubectl built with the control plane, whose
   * version is the API server's, when there is one: a kubectl on PATH may be more than one minor
   * version away.
   *
   * @param kubectl the control plane's kubectl, or null when there is none
   */
  static List<String> kubectl(boolean once, Path kubeconfig, Path kubectl, String version) {
    if (once) {
      return List.of(ONCE);
    }
    List<String> lines = new ArrayList<>();
    lines.add("Point kubectl at it (while this runs):");
    lines.add("  export KUBECONFIG=" + kubeconfig);
    if (kubectl != null) {
      lines.add(
          "  alias kubectl="
              + kubectl
              + "   # v"
              + version
              + ", the API server's version; one on PATH may be skewed");
    } else {
      lines.add(
          "  # use kubectl v"
              + minor(version)
              + ".x (the API server is v"
              + version
              + "; kubectl supports one minor version of skew)");
    }
    lines.add(
        "  kubectl get pods,resourceclaims -n "
            + Demo.NAMESPACE
            + " -o wide; kubectl get resourceslices,deviceclasses,computeclasses");
    return lines;
  }

  private static String minor(String version) {
    String[] parts = version.split("\\.");
    return parts.length >= 2 ? parts[0] + "." + parts[1] : version;
  }

  /** Said, and the demo exits with status 2, when {@code --cluster} runs without root. */
  public static final String CLUSTER_NEEDS_ROOT =
      "[demo] --cluster needs root (its nodes' kubelets and containerd, the pod network's network"
          + " namespaces and bridge, kube-proxy's iptables rules): run it as root, or bin/demo"
          + " without --cluster";

  /** What the pod from inside prints when the publisher's gRPC port opened, or did not. */
  static final String PORT_OPEN = "kdra-port-open";

  static final String PORT_CLOSED = "kdra-port-closed";

  /** One of the chart's pods: its node and its address on the pod network. */
  record ChartPod(String name, String node, String ip) {}

  /** A Service of the chart: its DNS name, ClusterIP and ports. */
  record ClusterService(String name, String clusterIp, String ports) {}

  static List<String> chartPods(List<ChartPod> pods) {
    List<String> lines = new ArrayList<>();
    lines.add("The chart's pods (namespace kdra-system, on the pod network):");
    for (ChartPod p : pods) {
      lines.add(String.format("  %-44s %-8s %s", p.name(), p.node(), p.ip()).stripTrailing());
    }
    return lines;
  }

  static List<String> clusterServices(List<ClusterService> services) {
    List<String> lines = new ArrayList<>();
    lines.add("Services (ClusterIPs that kube-proxy routes, names that CoreDNS resolves):");
    for (ClusterService s : services) {
      lines.add(String.format("  %-44s %-15s %s", s.name(), s.clusterIp(), s.ports()));
    }
    return lines;
  }

  /**
   * What a pod saw of {@code service} (in kdra-system) from inside: the addresses busybox's {@code
   * nslookup} printed after the name's {@code Name:} line, and whether {@code nc} opened its port.
   */
  static List<String> fromInside(
      String pod, String node, String service, int port, List<String> log) {
    String name = service + ".kdra-system.svc.cluster.local";
    List<String> addresses = new ArrayList<>();
    boolean answer = false;
    for (String line : log) {
      if (line.startsWith("Name:")) {
        answer = true;
      } else if (answer && line.startsWith("Address")) {
        addresses.add(line.substring(line.indexOf(':') + 1).strip());
      }
    }
    List<String> lines = new ArrayList<>();
    lines.add("From inside a pod (" + pod + " on " + node + "):");
    lines.add(
        addresses.isEmpty()
            ? "  " + name + " does not resolve"
            : "  " + name + " resolves to " + String.join(", ", addresses) + " (CoreDNS)");
    String reached;
    if (log.contains(PORT_OPEN)) {
      reached = "connected (no NetworkPolicy enforced)";
    } else if (log.contains(PORT_CLOSED)) {
      reached = "no connection (the chart's NetworkPolicy lets only device-drivers in)";
    } else {
      reached = "not tried";
    }
    lines.add("  its port " + port + ": " + reached);
    return lines;
  }

  /** A command as a shell shows it, then its output indented. */
  static List<String> command(String command, List<String> output) {
    List<String> lines = new ArrayList<>();
    lines.add("$ " + command);
    output.forEach(l -> lines.add(("  " + l).stripTrailing()));
    return lines;
  }

  /**
   * {@link #kubectl}, and, while the chart's cluster runs, the plugin {@code kubectl dra} on PATH
   * ({@code bin/kubectl-dra}) and commands that look across the nodes.
   */
  static List<String> clusterKubectl(
      boolean once, Path kubeconfig, Path kubectl, String version, Path bin) {
    List<String> lines = new ArrayList<>(kubectl(once, kubeconfig, kubectl, version));
    if (!once) {
      lines.add(
          "  export PATH=" + bin + ":$PATH   # kubectl dra: bin/kubectl-dra, a kubectl plugin");
      lines.add(
          "  kubectl get pods -A -o wide; kubectl dra devices; kubectl dra why pod/too-big -n "
              + Demo.NAMESPACE);
    }
    return lines;
  }

  /**
   * What {@code --scale-out} says about its nodes before it starts: they are Karpenter's, each a
   * Node object with a test kubelet, as root too.
   */
  public static final String SCALE_OUT_NODES =
      "[demo] --scale-out: the nodes Karpenter launches are Node objects with a test kubelet and a"
          + " device-driver each (its KWOK provider makes no machines), so no container runs";

  /**
   * The scale-out story's table of the Deployment's pods: each pod's node's instance type, the
   * devices its claim got, for which of the template's subrequests (a pod's devices are its node's:
   * the pool is the node's name), and the node; or that it is pending.
   */
  static List<String> placements(List<ScaleOutScenario.Placement> pods) {
    List<String[]> rows = new ArrayList<>();
    // the node last: Karpenter's node names are long
    rows.add(new String[] {"POD", "TYPE", "DEVICES (request: devices of its node)", "NODE"});
    for (ScaleOutScenario.Placement p : pods) {
      if (p.node() == null) {
        rows.add(new String[] {p.pod(), "-", "Pending", "-"});
        continue;
      }
      String devices =
          p.devices().stream()
              .map(d -> d.startsWith(p.node() + "/") ? d.substring(p.node().length() + 1) : d)
              .collect(java.util.stream.Collectors.joining(", "));
      String requests = String.join(", ", new LinkedHashSet<>(p.requests()));
      rows.add(
          new String[] {
            p.pod(),
            p.instanceType() == null ? "?" : p.instanceType(),
            (devices.isEmpty() ? "not allocated" : requests + ": " + devices)
                + (p.prepared() ? "" : " (not prepared yet)"),
            p.node()
          });
    }
    int[] widths = new int[3];
    for (String[] row : rows) {
      for (int c = 0; c < widths.length; c++) {
        widths[c] = Math.max(widths[c], row[c].length());
      }
    }
    List<String> lines = new ArrayList<>();
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder("  ");
      for (int c = 0; c < widths.length; c++) {
        line.append(String.format("%-" + widths[c] + "s  ", row[c]));
      }
      lines.add(line.append(row[3]).toString());
    }
    return lines;
  }

  /** After the kubectl lines of {@code --scale-out}: how to watch Karpenter do it again. */
  static List<String> scaleOutKubectl() {
    return List.of(
        "  kubectl get nodes -L "
            + ScaleOutScenario.INSTANCE_TYPE_LABEL
            + "; kubectl get nodepools,nodeclaims",
        "  kubectl scale deployment "
            + ScaleOutScenario.APP
            + " -n "
            + Demo.NAMESPACE
            + " --replicas=2   # Karpenter launches nodes again (L4 ones: the A100s stay withdrawn)");
  }
}
