package io.kdra.claimcontroller.domain;

import static io.kdra.claimcontroller.domain.ScoreFixtures.named;
import static io.kdra.claimcontroller.domain.ScoreFixtures.node;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pairs;
import static io.kdra.claimcontroller.domain.ScoreFixtures.pod;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Upstream's {@code TestTaintTolerationScore}, its cases and expected scores. */
class TaintTolerationScoreTest {

  static Taint taint(String key, String value, String effect) {
    return new Taint(effect, key, null, value);
  }

  static Toleration toleration(String key, String value, String effect) {
    return new Toleration(effect, key, "Equal", null, value);
  }

  static Node tainted(String name, Taint... taints) {
    return node(name).editSpec().withTaints(taints).endSpec().build();
  }

  static Pod tolerating(Toleration... tols) {
    return pod("pod1").editSpec().withTolerations(tols).endSpec().build();
  }

  static Arguments c(String name, Pod pod, List<Node> nodes, String... expected) {
    return Arguments.of(Named.of(name, pod), nodes, pairs(expected));
  }

  static Stream<Arguments> cases() {
    String pns = "PreferNoSchedule";
    return Stream.of(
        c(
            "node with taints tolerated by the pod, gets a higher score than those node with"
                + " intolerable taints",
            tolerating(toleration("foo", "bar", pns)),
            List.of(
                tainted("nodeA", taint("foo", "bar", pns)),
                tainted("nodeB", taint("foo", "blah", pns))),
            "nodeA",
            "100",
            "nodeB",
            "0"),
        c(
            "the nodes that all of their taints are tolerated by the pod, get the same score, no"
                + " matter how many tolerable taints a node has",
            tolerating(toleration("cpu-type", "arm64", pns), toleration("disk-type", "ssd", pns)),
            List.of(
                tainted("nodeA"),
                tainted("nodeB", taint("cpu-type", "arm64", pns)),
                tainted("nodeC", taint("cpu-type", "arm64", pns), taint("disk-type", "ssd", pns))),
            "nodeA",
            "100",
            "nodeB",
            "100",
            "nodeC",
            "100"),
        c(
            "the more intolerable taints a node has, the lower score it gets.",
            tolerating(toleration("foo", "bar", pns)),
            List.of(
                tainted("nodeA"),
                tainted("nodeB", taint("cpu-type", "arm64", pns)),
                tainted("nodeC", taint("cpu-type", "arm64", pns), taint("disk-type", "ssd", pns))),
            "nodeA",
            "100",
            "nodeB",
            "50",
            "nodeC",
            "0"),
        c(
            "only taints and tolerations that have effect PreferNoSchedule are checked by"
                + " taints-tolerations priority function",
            tolerating(
                toleration("cpu-type", "arm64", "NoSchedule"),
                toleration("disk-type", "ssd", "NoSchedule")),
            List.of(
                tainted("nodeA"),
                tainted("nodeB", taint("cpu-type", "arm64", "NoSchedule")),
                tainted("nodeC", taint("cpu-type", "arm64", pns), taint("disk-type", "ssd", pns))),
            "nodeA",
            "100",
            "nodeB",
            "100",
            "nodeC",
            "0"),
        c(
            "Default behaviour No taints and tolerations, lands on node with no taints",
            tolerating(),
            List.of(tainted("nodeA"), tainted("nodeB", taint("cpu-type", "arm64", pns))),
            "nodeA",
            "100",
            "nodeB",
            "0"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void scores(Pod pod, List<Node> nodes, Map<String, String> expected) {
    Map<String, String> got = new java.util.LinkedHashMap<>();
    named(nodes, TaintTolerationScore.score(pod, nodes)).forEach((k, v) -> got.put(k, "" + v));
    assertEquals(expected, got);
  }
}
