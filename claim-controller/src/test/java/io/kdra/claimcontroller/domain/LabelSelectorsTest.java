package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** apimachinery's {@code LabelSelectorAsSelector} semantics. */
class LabelSelectorsTest {

  static LabelSelector expr(String key, String op, String... values) {
    return new LabelSelectorBuilder()
        .addNewMatchExpression()
        .withKey(key)
        .withOperator(op)
        .withValues(values)
        .endMatchExpression()
        .build();
  }

  static Stream<Arguments> cases() {
    Map<String, String> ab = Map.of("a", "1", "b", "2");
    return Stream.of(
        Arguments.of("null matches nothing", null, ab, false),
        Arguments.of("empty matches everything", new LabelSelector(), Map.of(), true),
        Arguments.of(
            "matchLabels equal",
            new LabelSelectorBuilder().addToMatchLabels("a", "1").build(),
            ab,
            true),
        Arguments.of(
            "matchLabels differ",
            new LabelSelectorBuilder().addToMatchLabels("a", "2").build(),
            ab,
            false),
        Arguments.of("In", expr("a", "In", "0", "1"), ab, true),
        Arguments.of("In, key absent", expr("c", "In", "1"), ab, false),
        Arguments.of("NotIn, key absent", expr("c", "NotIn", "1"), ab, true),
        Arguments.of("NotIn, value listed", expr("a", "NotIn", "1"), ab, false),
        Arguments.of("Exists", expr("b", "Exists"), ab, true),
        Arguments.of("DoesNotExist", expr("b", "DoesNotExist"), ab, false),
        Arguments.of("DoesNotExist, no labels", expr("b", "DoesNotExist"), null, true),
        Arguments.of("unknown operator", expr("a", "Gt", "0"), ab, false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void matches(String name, LabelSelector s, Map<String, String> labels, boolean matches) {
    assertThat(LabelSelectors.of(s).matches(labels)).isEqualTo(matches);
  }
}
