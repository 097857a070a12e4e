package io.kdra.core.alloc;

import static io.kdra.core.testing.AllocFixtures.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Node selector semantics as nodeaffinity implements them, against node-a{zone=a, gpus=8}. */
class NodeSelectorsTest {

  static NodeSelector expr(String key, String op, String... values) {
    return new NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .addToMatchExpressions(
            new NodeSelectorRequirementBuilder()
                .withKey(key)
                .withOperator(op)
                .withValues(values)
                .build())
        .endNodeSelectorTerm()
        .build();
  }

  static NodeSelector field(String op, String... values) {
    return new NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .addToMatchFields(
            new NodeSelectorRequirementBuilder()
                .withKey("metadata.name")
                .withOperator(op)
                .withValues(values)
                .build())
        .endNodeSelectorTerm()
        .build();
  }

  static Arguments tc(String name, NodeSelector s, boolean matches) {
    return arguments(named(name, s), matches);
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        tc("In matches", expr("zone", "In", "a", "b"), true),
        tc("In without the label", expr("rack", "In", "r1"), false),
        tc("NotIn without the label matches", expr("rack", "NotIn", "r1"), true),
        tc("NotIn with the value", expr("zone", "NotIn", "a"), false),
        tc("Exists", expr("zone", "Exists"), true),
        tc("DoesNotExist", expr("zone", "DoesNotExist"), false),
        tc("Gt integer", expr("gpus", "Gt", "4"), true),
        tc("Lt integer", expr("gpus", "Lt", "4"), false),
        tc("Gt with a non-integer never matches", expr("zone", "Gt", "1"), false),
        tc("matchFields metadata.name In", field("In", "node-a"), true),
        tc("matchFields metadata.name NotIn", field("NotIn", "node-a"), false),
        tc(
            "term without requirements matches nothing",
            new NodeSelectorBuilder().addNewNodeSelectorTerm().endNodeSelectorTerm().build(),
            false),
        tc(
            "terms are ORed",
            new NodeSelectorBuilder()
                .addAllToNodeSelectorTerms(expr("zone", "In", "x").getNodeSelectorTerms())
                .addAllToNodeSelectorTerms(expr("zone", "In", "a").getNodeSelectorTerms())
                .build(),
            true),
        tc("unknown operator never matches", expr("zone", "Like", "a"), false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void matches(NodeSelector selector, boolean expected) {
    assertThat(NodeSelectors.matches(selector, node("node-a", "zone", "a", "gpus", "8")))
        .isEqualTo(expected);
  }
}
