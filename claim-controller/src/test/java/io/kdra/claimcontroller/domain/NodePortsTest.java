package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Cases from upstream's {@code nodeports/node_ports_test.go} ({@code TestNodePorts}). */
class NodePortsTest {

  /** Upstream's {@code newPod(host, "PROTO/ip/port"...)}. */
  static Pod withPorts(String name, String node, String... ports) {
    List<ContainerPort> cps =
        Arrays.stream(ports)
            .map(
                s -> {
                  String[] f = s.split("/");
                  return new ContainerPortBuilder()
                      .withProtocol(f[0])
                      .withHostIP(f[1])
                      .withHostPort(Integer.parseInt(f[2]))
                      .withContainerPort(Integer.parseInt(f[2]))
                      .build();
                })
            .toList();
    return K.pod(name)
        .editSpec()
        .withNodeName(node)
        .editFirstContainer()
        .withPorts(cps)
        .endContainer()
        .endSpec()
        .build();
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of("nothing running", new String[] {}, new String[] {}, true),
        Arguments.of(
            "other port",
            new String[] {"UDP/127.0.0.1/8080"},
            new String[] {"UDP/127.0.0.1/9090"},
            true),
        Arguments.of(
            "same udp port",
            new String[] {"UDP/127.0.0.1/8080"},
            new String[] {"UDP/127.0.0.1/8080"},
            false),
        Arguments.of(
            "same tcp port",
            new String[] {"TCP/127.0.0.1/8080"},
            new String[] {"TCP/127.0.0.1/8080"},
            false),
        Arguments.of(
            "different host ip",
            new String[] {"TCP/127.0.0.1/8080"},
            new String[] {"TCP/127.0.0.2/8080"},
            true),
        Arguments.of(
            "different protocol",
            new String[] {"UDP/127.0.0.1/8080"},
            new String[] {"TCP/127.0.0.1/8080"},
            true),
        Arguments.of(
            "second udp port conflict",
            new String[] {"UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"},
            new String[] {"UDP/127.0.0.1/8080"},
            false),
        Arguments.of(
            "first tcp port conflict",
            new String[] {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"},
            new String[] {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"},
            false),
        Arguments.of(
            "first tcp port conflict due to 0.0.0.0 hostIP",
            new String[] {"TCP/0.0.0.0/8001"},
            new String[] {"TCP/127.0.0.1/8001"},
            false),
        Arguments.of(
            "TCP hostPort conflict due to 0.0.0.0 hostIP",
            new String[] {"TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"},
            new String[] {"TCP/127.0.0.1/8001"},
            false),
        Arguments.of(
            "second tcp port conflict to 0.0.0.0 hostIP",
            new String[] {"TCP/127.0.0.1/8001"},
            new String[] {"TCP/0.0.0.0/8001"},
            false),
        Arguments.of(
            "second different protocol",
            new String[] {"UDP/127.0.0.1/8001"},
            new String[] {"TCP/0.0.0.0/8001"},
            true),
        Arguments.of(
            "UDP hostPort conflict due to 0.0.0.0 hostIP",
            new String[] {"UDP/127.0.0.1/8001"},
            new String[] {"TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"},
            false),
        // not upstream's: empty host IP and protocol read as 0.0.0.0 and TCP
        Arguments.of(
            "empty host IP and protocol are 0.0.0.0 and TCP",
            new String[] {"/127.0.0.1/8001"},
            new String[] {"TCP//8001"},
            false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void filters(String name, String[] wanted, String[] onNode, boolean fits) {
    Node n = K.readyNode("n");
    Pod pod = withPorts("p", null, wanted);
    Pod existing = withPorts("x", "n", onNode);
    assertThat(NodePorts.prefilter(pod, List.of(existing)).reject(n))
        .isEqualTo(fits ? java.util.Optional.empty() : java.util.Optional.of(NodePorts.REASON));
  }

  @Test
  void portsOnOtherNodesDoNotCount() {
    Pod pod = withPorts("p", null, "TCP/0.0.0.0/80");
    Pod elsewhere = withPorts("x", "other", "TCP/0.0.0.0/80");
    assertThat(NodePorts.prefilter(pod, List.of(elsewhere)).reject(K.readyNode("n"))).isEmpty();
  }

  /**
   * Upstream's {@code GetHostPorts}: sidecars (restartPolicy Always) count, init containers not.
   */
  @Test
  void sidecarPortsCountAndInitContainerPortsDoNot() {
    Pod sidecar =
        new PodBuilder(K.pod("x").build())
            .editSpec()
            .withNodeName("n")
            .addNewInitContainer()
            .withName("side")
            .withRestartPolicy("Always")
            .addNewPort()
            .withHostPort(80)
            .withContainerPort(80)
            .endPort()
            .endInitContainer()
            .addNewInitContainer()
            .withName("init")
            .addNewPort()
            .withHostPort(81)
            .withContainerPort(81)
            .endPort()
            .endInitContainer()
            .endSpec()
            .build();
    assertThat(
            NodePorts.prefilter(withPorts("p", null, "TCP//80"), List.of(sidecar))
                .reject(K.readyNode("n")))
        .contains(NodePorts.REASON);
    assertThat(
            NodePorts.prefilter(withPorts("p", null, "TCP//81"), List.of(sidecar))
                .reject(K.readyNode("n")))
        .isEmpty();
  }
}
