package io.kdra.it.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.it.support.HostLeaks.RunProcess;
import io.kdra.it.support.HostLeaks.RunTrace;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
        Set.of(
            "lo", "eth0", BRIDGE, BRIDGE + "v0", "kdramn4", "veth99", "kdrabr4", "kv0123456789ab"),
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
        Set.of("lo", "eth0", "kdramn4", "kdramn4v0"),
        Set.of("iptables-save filter :INPUT ACCEPT"),
        Set.of("/ overlay overlay"),
        Set.of("memory/user.slice", "memory/kdra-node.777.1.node-a"),
        Set.of("old.log", "someone-elses", "etcddata3"),
        Set.of("/var/lib/kubelet"),
        Set.of("kernel/panic=0"));
  }

  /**
   * Each row: what the clean-up left different from {@link #cleaned()} (the parts of the snapshot
   * by their record component's name), and the leaks that makes.
   */
  static Stream<Arguments> cases() {
    return Stream.of(
        row("all cleaned, other run's things kept", Map.of(), List.of()),
        row(
            "a process of the run survives (same start)",
            Map.of("processes", Map.of(1L, 10L, 601L, 61L)),
            List.of("process 601 (/cache/containerd-shim-runc-v2)")),
        row(
            "its pid reused by a new process: not the run's",
            Map.of("processes", Map.of(1L, 10L, 601L, 99L)),
            List.of()),
        row(
            "the run's namespace held by a process that ran meanwhile",
            Map.of("namespaces", Map.of("net:[1]", Set.of(1L), "net:[7]", Set.of(900L))),
            List.of("namespace net:[7] held by process 900")),
        row(
            "its bridge and veth stay",
            Map.of("links", Set.of("lo", "eth0", BRIDGE, BRIDGE + "v0")),
            List.of("link " + BRIDGE, "link " + BRIDGE + "v0")),
        row(
            "a veth that appeared while it ran stays",
            Map.of("links", Set.of("lo", "eth0", "veth99")),
            List.of("link veth99")),
        row(
            "links named as the removed single-node pod network's: no run makes them, so its own",
            Map.of("links", Set.of("lo", "eth0", "kdrabr4", "kv0123456789ab")),
            List.of("link kdrabr4", "link kv0123456789ab")),
        row(
            "a new host firewall rule",
            Map.of(
                "firewall",
                Set.of(
                    "iptables-save filter :INPUT ACCEPT",
                    "iptables-save filter -A INPUT -j KUBE-FIREWALL")),
            List.of("host firewall iptables-save filter -A INPUT -j KUBE-FIREWALL")),
        row(
            "a host mount of the run stays",
            Map.of("mounts", Set.of("/ overlay overlay", "/run/netns/cni-1 nsfs nsfs")),
            List.of("mount /run/netns/cni-1 nsfs nsfs")),
        row(
            "its node cgroup stays",
            Map.of(
                "cgroups",
                Set.of(
                    "memory/user.slice",
                    "memory/kdra-node.777.1.node-a",
                    "memory/kdra-node." + RUN + ".1.node-a/kubepods")),
            List.of("cgroup memory/kdra-node." + RUN + ".1.node-a/kubepods")),
        row(
            "a cgroup outside any node's appeared and stays",
            Map.of(
                "cgroups",
                Set.of("memory/user.slice", "memory/kdra-node.777.1.node-a", "memory/kubepods")),
            List.of("cgroup memory/kubepods")),
        row(
            "temporary files it named stay; one it found there does not count",
            Map.of("tempEntries", Set.of("old.log", "kdra-control-plane1", "etcddata2")),
            List.of("temporary file etcddata2", "temporary file kdra-control-plane1")),
        row(
            "a well-known path it made stays, no other node left",
            Map.of("mountPoints", Set.of("/var/lib/kubelet", "/var/run/cdi"), "cgroups", Set.of()),
            List.of("mount point /var/lib/kubelet", "mount point /var/run/cdi")),
        row(
            "a machine-wide kernel setting changed",
            Map.of("sysctls", Set.of("kernel/panic=10")),
            List.of("kernel setting kernel/panic=10")),
        row(
            "the well-known paths are another live node's",
            Map.of("mountPoints", Set.of("/var/lib/kubelet", "/var/run/cdi")),
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void findsWhatTheKilledRunLeft(String name, Map<String, Object> left, List<String> leaks) {
    assertThat(HostLeaks.find(host(), during(), with(cleaned(), left), run()))
        .containsExactlyInAnyOrderElementsOf(leaks);
  }

  private static Arguments row(String name, Map<String, Object> left, List<String> leaks) {
    return Arguments.of(name, left, leaks);
  }

  /**
   * {@code s} with the parts named in {@code parts} replaced; a name that is no part of a snapshot
   * fails the row.
   */
  private static HostSnapshot with(HostSnapshot s, Map<String, Object> parts) {
    RecordComponent[] components = HostSnapshot.class.getRecordComponents();
    List<String> names = Arrays.stream(components).map(RecordComponent::getName).toList();
    if (!names.containsAll(parts.keySet())) {
      throw new IllegalArgumentException(parts.keySet() + " not all parts of " + names);
    }
    try {
      Object[] values = new Object[components.length];
      for (int i = 0; i < components.length; i++) {
        values[i] =
            parts.containsKey(names.get(i))
                ? parts.get(names.get(i))
                : components[i].getAccessor().invoke(s);
      }
      Class<?>[] types =
          Arrays.stream(components).map(RecordComponent::getType).toArray(Class[]::new);
      return HostSnapshot.class.getDeclaredConstructor(types).newInstance(values);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
