package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.kdra.claimcontroller.domain.GangTransaction.Domain;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The domains a gang may go to, as upstream's topologyaware plugin generates them. */
class GangDomainsTest {

  static Node node(String name, String rack) {
    NodeBuilder b = new NodeBuilder().withNewMetadata().withName(name).endMetadata();
    if (rack != null) {
      b.editMetadata().addToLabels("rack", rack).endMetadata();
    }
    return b.build();
  }

  static final List<Node> NODES =
      List.of(node("n1", "b"), node("n2", "a"), node("n3", "b"), node("n4", null));

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of("no key: anywhere", null, Set.of(), List.of("anywhere")),
        Arguments.of(
            "one domain per value, sorted; an unlabelled node in none",
            "rack",
            Set.of(),
            List.of("rack=a", "rack=b")),
        Arguments.of(
            "members placed in rack b: only rack b", "rack", Set.of("n3"), List.of("rack=b")),
        Arguments.of("members placed across racks: none", "rack", Set.of("n2", "n3"), List.of()),
        Arguments.of(
            "a member placed on an unlabelled node: none", "rack", Set.of("n4"), List.of()),
        Arguments.of("no node carries the key: none", "zone", Set.of(), List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void domains(String name, String key, Set<String> placedOn, List<String> expected) {
    assertThat(GangDomains.of(NODES, key, placedOn)).map(Domain::toString).isEqualTo(expected);
  }
}
