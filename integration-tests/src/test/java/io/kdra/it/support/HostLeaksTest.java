package io.kdra.it.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.it.support.HostLeaks.RunProcess;
import io.kdra.it.support.HostLeaks.RunTrace;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What counts as left by a killed run: its own things that survive the clean-up, never what other
 * runs on the machine make or remove meanwhile.
 */
class HostLeaksTest {

  private static final long RUN = 500;
  private static final String BRIDGE = "kdramn3";

  private static HostSnapshot host() {
    return new HostSnapshot(
        Map.of(1L, 10L),
        Map.of("net:[1]", Set.of(1L)),
        Set.of("lo", "eth0"),
        Set.of("iptables-save filter :INPUT ACCEPT"),
        Set.of("/ overlay overlay"),
        Set.of("memory/user.slice"),
        Set.of("old.log"),
        Set.of(),
        Set.of("kernel/panic=0"));
  }

  /** The host while the run ran: its bridge, veth, cgroup, processes and files. */
  private static HostSnapshot during() {
    return new HostSnapshot(
        Map.of(1L, 10L, 600L, 60L, 601L, 61L, 900L, 90L),
        Map.of("net:[1]", Set.of(1L, 600L), "net:[7]", Set.of(601L), "net:[9]", Set.of(900L)),
        Set.of("lo", "eth0", BRIDGE, BRIDGE + "v0", "kdramn4", "veth99", "kv0123456789ab"),
        Set.of("iptables-save filter :INPUT ACCEPT"),
        Set.of("/ overlay overlay", "/run/netns/cni-1 nsfs nsfs"),
        Set.of(
            "memory/user.slice",
            "memory/kdra-node." + RUN + ".1.node-a",
            "memory/kdra-node.777.1.node-a",
            "memory/kubepods"),
        Set.of("old.log", "kdra-control-plane1", "etcddata2", "someone-elses"),
        Set.of("/var/lib/kubelet"),
        Set.of("kernel/panic=0"));
  }

  private static RunTrace run() {
    return new RunTrace(
        RUN,
        BRIDGE,
        Map.of(
            RUN,
            new RunProcess(50L, "/usr/bin/java"),
            600L,
            new RunProcess(60L, "/cache/kubelet"),
            601L,
            new RunProcess(61L, "/cache/containerd-shim-runc-v2")),
        Set.of("net:[1]", "net:[7]"),
        Set.of("kdra-control-plane1", "etcddata2", "old.log"));
  }

  /** After a clean clean-up: the run's things gone, another run's (pid 777, slot 4) still there. */
  private static HostSnapshot cleaned() {
    return new HostSnapshot(
        Map.of(1L, 10L, 900L, 90L, 950L, 95L),
        Map.of("net:[1]", Set.of(1L), "net:[7]", Set.of(950L), "net:[9]", Set.of(900L)),
        Set.of("lo", "eth0", "kdramn4", "kdramn4v0", "kv0123456789ab"),
        Set.of("iptables-save filter :INPUT ACCEPT"),
        Set.of("/ overlay overlay"),
        Set.of("memory/user.slice", "memory/kdra-node.777.1.node-a"),
        Set.of("old.log", "someone-elses", "etcddata3"),
        Set.of("/var/lib/kubelet"),
        Set.of("kernel/panic=0"));
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of("all cleaned, other run's things kept", id(), List.of()),
        Arguments.of(
            "a process of the run survives (same start)",
            with(s -> processes(s, Map.of(1L, 10L, 601L, 61L))),
            List.of("process 601 (/cache/containerd-shim-runc-v2)")),
        Arguments.of(
            "its pid reused by a new process: not the run's",
            with(s -> processes(s, Map.of(1L, 10L, 601L, 99L))),
            List.of()),
        Arguments.of(
            "the run's namespace held by a process that ran meanwhile",
            with(s -> namespaces(s, Map.of("net:[1]", Set.of(1L), "net:[7]", Set.of(900L)))),
            List.of("namespace net:[7] held by process 900")),
        Arguments.of(
            "its bridge and veth stay",
            with(s -> links(s, Set.of("lo", "eth0", BRIDGE, BRIDGE + "v0"))),
            List.of("link " + BRIDGE, "link " + BRIDGE + "v0")),
        Arguments.of(
            "a veth that appeared while it ran stays",
            with(s -> links(s, Set.of("lo", "eth0", "veth99"))),
            List.of("link veth99")),
        Arguments.of(
            "a new host firewall rule",
            with(
                s ->
                    firewall(
                        s,
                        Set.of(
                            "iptables-save filter :INPUT ACCEPT",
                            "iptables-save filter -A INPUT -j KUBE-FIREWALL"))),
            List.of("host firewall iptables-save filter -A INPUT -j KUBE-FIREWALL")),
        Arguments.of(
            "a host mount of the run stays",
            with(s -> mounts(s, Set.of("/ overlay overlay", "/run/netns/cni-1 nsfs nsfs"))),
            List.of("mount /run/netns/cni-1 nsfs nsfs")),
        Arguments.of(
            "its node cgroup stays",
            with(
                s ->
                    cgroups(
                        s,
                        Set.of(
                            "memory/user.slice",
                            "memory/kdra-node.777.1.node-a",
                            "memory/kdra-node." + RUN + ".1.node-a/kubepods"))),
            List.of("cgroup memory/kdra-node." + RUN + ".1.node-a/kubepods")),
        Arguments.of(
            "a cgroup outside any node's appeared and stays",
            with(
                s ->
                    cgroups(
                        s,
                        Set.of(
                            "memory/user.slice",
                            "memory/kdra-node.777.1.node-a",
                            "memory/kubepods"))),
            List.of("cgroup memory/kubepods")),
        Arguments.of(
            "temporary files it named stay; one it found there does not count",
            with(s -> temp(s, Set.of("old.log", "kdra-control-plane1", "etcddata2"))),
            List.of("temporary file etcddata2", "temporary file kdra-control-plane1")),
        Arguments.of(
            "a well-known path it made stays, no other node left",
            with(
                s -> cgroups(mountPoints(s, Set.of("/var/lib/kubelet", "/var/run/cdi")), Set.of())),
            List.of("mount point /var/lib/kubelet", "mount point /var/run/cdi")),
        Arguments.of(
            "a machine-wide kernel setting changed",
            with(s -> sysctls(s, Set.of("kernel/panic=10"))),
            List.of("kernel setting kernel/panic=10")),
        Arguments.of(
            "the well-known paths are another live node's",
            with(s -> mountPoints(s, Set.of("/var/lib/kubelet", "/var/run/cdi"))),
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void findsWhatTheKilledRunLeft(
      String name, UnaryOperator<HostSnapshot> after, List<String> leaks) {
    assertThat(HostLeaks.find(host(), during(), after.apply(cleaned()), run()))
        .containsExactlyInAnyOrderElementsOf(leaks);
  }

  private static UnaryOperator<HostSnapshot> id() {
    return s -> s;
  }

  private static UnaryOperator<HostSnapshot> with(UnaryOperator<HostSnapshot> f) {
    return f;
  }

  private static HostSnapshot processes(HostSnapshot s, Map<Long, Long> v) {
    return new HostSnapshot(
        v,
        s.namespaces(),
        s.links(),
        s.firewall(),
        s.mounts(),
        s.cgroups(),
        s.tempEntries(),
        s.mountPoints(),
        s.sysctls());
  }

  private static HostSnapshot namespaces(HostSnapshot s, Map<String, Set<Long>> v) {
    return new HostSnapshot(
        s.processes(),
        v,
        s.links(),
        s.firewall(),
        s.mounts(),
        s.cgroups(),
        s.tempEntries(),
        s.mountPoints(),
        s.sysctls());
  }

  private static HostSnapshot links(HostSnapshot s, Set<String> v) {
    return new HostSnapshot(
        s.processes(),
        s.namespaces(),
        v,
        s.firewall(),
        s.mounts(),
        s.cgroups(),
        s.tempEntries(),
        s.mountPoints(),
        s.sysctls());
  }

  private static HostSnapshot firewall(HostSnapshot s, Set<String> v) {
    return new HostSnapshot(
        s.processes(),
        s.namespaces(),
        s.links(),
        v,
        s.mounts(),
        s.cgroups(),
        s.tempEntries(),
        s.mountPoints(),
        s.sysctls());
  }

  private static HostSnapshot mounts(HostSnapshot s, Set<String> v) {
    return new HostSnapshot(
        s.processes(),
        s.namespaces(),
        s.links(),
        s.firewall(),
        v,
        s.cgroups(),
        s.tempEntries(),
        s.mountPoints(),
        s.sysctls());
  }

  private static HostSnapshot cgroups(HostSnapshot s, Set<String> v) {
    return new HostSnapshot(
        s.processes(),
        s.namespaces(),
        s.links(),
        s.firewall(),
        s.mounts(),
        v,
        s.tempEntries(),
        s.mountPoints(),
        s.sysctls());
  }

  private static HostSnapshot temp(HostSnapshot s, Set<String> v) {
    return new HostSnapshot(
        s.processes(),
        s.namespaces(),
        s.links(),
        s.firewall(),
        s.mounts(),
        s.cgroups(),
        v,
        s.mountPoints(),
        s.sysctls());
  }

  private static HostSnapshot sysctls(HostSnapshot s, Set<String> v) {
    return new HostSnapshot(
        s.processes(),
        s.namespaces(),
        s.links(),
        s.firewall(),
        s.mounts(),
        s.cgroups(),
        s.tempEntries(),
        s.mountPoints(),
        v);
  }

  private static HostSnapshot mountPoints(HostSnapshot s, Set<String> v) {
    return new HostSnapshot(
        s.processes(),
        s.namespaces(),
        s.links(),
        s.firewall(),
        s.mounts(),
        s.cgroups(),
        s.tempEntries(),
        v,
        s.sysctls());
  }
}
