package io.kdra.claimcontroller.domain;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.claimcontroller.domain.GangTransaction.Committed;
import io.kdra.claimcontroller.domain.GangTransaction.Domain;
import io.kdra.claimcontroller.domain.GangTransaction.Refused;
import io.kdra.claimcontroller.domain.GangTransaction.Result;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The gang pass over a toy cluster: nodes with free GPUs and a rack label, members that need some
 * GPUs on one node. What the pass keeps, and that a refused pass leaves every GPU free.
 */
class GangTransactionTest {

  /** A node: its name, rack and free GPUs. */
  record ToyNode(String name, String rack, int free) {}

  /** A member: its index in the gang and the GPUs it needs on one node. */
  record Member(int index, int gpus) {}

  /** The toy placer: first node in the domain with enough free GPUs; remembers what is taken. */
  static final class Toy implements GangTransaction.Placer<Member, String> {
    final Map<String, Integer> free = new LinkedHashMap<>();
    final Map<String, String> racks = new LinkedHashMap<>();

    Toy(List<ToyNode> nodes) {
      nodes.forEach(
          n -> {
            free.put(n.name(), n.free());
            racks.put(n.name(), n.rack());
          });
    }

    @Override
    public Optional<String> place(Member m, Domain domain) {
      int gpus = m.gpus();
      for (var e : free.entrySet()) {
        if (domain.contains(Map.of("rack", racks.get(e.getKey()))) && e.getValue() >= gpus) {
          e.setValue(e.getValue() - gpus);
          return Optional.of(e.getKey());
        }
      }
      return Optional.empty();
    }

    @Override
    public void release(Member m, String node) {
      free.merge(node, m.gpus(), Integer::sum);
    }
  }

  static List<Domain> racks(String... values) {
    return Stream.of(values).map(v -> new Domain("rack", v)).toList();
  }

  static final List<ToyNode> FOUR_ONE_GPU_NODES =
      List.of(
          new ToyNode("n1", "a", 1),
          new ToyNode("n2", "a", 1),
          new ToyNode("n3", "b", 1),
          new ToyNode("n4", "b", 1));

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of(
            "four one-GPU members land whole on four one-GPU nodes",
            FOUR_ONE_GPU_NODES,
            List.of(1, 1, 1, 1),
            4,
            List.of(Domain.ANYWHERE),
            "committed anywhere n1,n2,n3,n4"),
        Arguments.of(
            "a fifth member that cannot fit refuses the whole gang of minCount 5",
            FOUR_ONE_GPU_NODES,
            List.of(1, 1, 1, 1, 1),
            5,
            List.of(Domain.ANYWHERE),
            "refused 4/5"),
        Arguments.of(
            "minCount 4 of 5: four kept, the fifth left pending",
            FOUR_ONE_GPU_NODES,
            List.of(1, 1, 1, 1, 1),
            4,
            List.of(Domain.ANYWHERE),
            "committed anywhere n1,n2,n3,n4"),
        Arguments.of(
            "a member needing more than any node has refuses the gang",
            FOUR_ONE_GPU_NODES,
            List.of(1, 2),
            2,
            List.of(Domain.ANYWHERE),
            "refused 1/2"),
        Arguments.of(
            "two members in one rack: rack a takes them",
            FOUR_ONE_GPU_NODES,
            List.of(1, 1),
            2,
            racks("a", "b"),
            "committed rack=a n1,n2"),
        Arguments.of(
            "three members fit in no single rack, though the cluster has four GPUs",
            FOUR_ONE_GPU_NODES,
            List.of(1, 1, 1),
            3,
            racks("a", "b"),
            "refused 2/3"),
        Arguments.of(
            "rack a too small for two: rack b takes them",
            List.of(
                new ToyNode("n1", "a", 1), new ToyNode("n3", "b", 1), new ToyNode("n4", "b", 1)),
            List.of(1, 1),
            2,
            racks("a", "b"),
            "committed rack=b n3,n4"),
        Arguments.of(
            "quorum already met (need 0): one member that fits is kept",
            FOUR_ONE_GPU_NODES,
            List.of(1),
            0,
            List.of(Domain.ANYWHERE),
            "committed anywhere n1"),
        Arguments.of(
            "quorum already met but nothing fits: refused",
            List.of(new ToyNode("n1", "a", 0)),
            List.of(1),
            0,
            List.of(Domain.ANYWHERE),
            "refused 0/1"),
        Arguments.of(
            "no domain at all (no node carries the key): refused",
            FOUR_ONE_GPU_NODES,
            List.of(1),
            1,
            List.of(),
            "refused 0/1"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void pass(
      String name,
      List<ToyNode> nodes,
      List<Integer> members,
      int need,
      List<Domain> domains,
      String expected) {
    Toy toy = new Toy(nodes);
    Map<String, Integer> before = new LinkedHashMap<>(toy.free);

    List<Member> gang = new ArrayList<>();
    for (int i = 0; i < members.size(); i++) {
      gang.add(new Member(i, members.get(i)));
    }

    Result<Member, String> r = GangTransaction.run(gang, need, domains, toy);

    assertThat(describe(r)).isEqualTo(expected);
    if (r instanceof Refused<?, ?>) {
      assertThat(toy.free).as("a refused gang holds nothing").isEqualTo(before);
    }
  }

  private static String describe(Result<Member, String> r) {
    if (r instanceof Committed<Member, String> c) {
      return "committed " + c.domain() + " " + String.join(",", c.placed().values());
    }
    Refused<Member, String> no = (Refused<Member, String>) r;
    return "refused " + no.mostPlaced() + "/" + no.need();
  }
}
