package io.kdra.devicedriver.sharing;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.prepare.PreparedClaim;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The MPS limits of one claim's share of a GPU, from the allocator's accounting, and the limits the
 * GPU's daemon enforces for all of its clients: the largest share of the claims it serves.
 */
class MpsLimitsTest {
  private static final Quantity GPU_MEMORY = Quantity.parse("80Gi");

  private static Map<String, Quantity> consumed(String... kv) {
    return kv.length == 0
        ? Map.of()
        : kv.length == 2
            ? Map.of(kv[0], Quantity.parse(kv[1]))
            : Map.of(kv[0], Quantity.parse(kv[1]), kv[2], Quantity.parse(kv[3]));
  }

  static Stream<Arguments> shares() {
    return Stream.of(
        Arguments.of("1 of 4 shares, 20Gi", consumed("shares", "1", "memory", "20Gi"), 25, 20480L),
        Arguments.of("3 of 8 shares rounds up", consumed("shares", "3"), 38, 81920L),
        Arguments.of("no accounting: the whole GPU", consumed(), 100, 81920L),
        Arguments.of("memory only", consumed("memory", "1500Mi"), 100, 1500L));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("shares")
  void aClaimsShareFollowsTheAllocatorsAccounting(
      String why, Map<String, Quantity> consumed, int percent, long mib) {
    int total = why.startsWith("3 of 8") ? 8 : 4;
    MpsLimits share =
        MpsLimits.ofShare(consumed, Quantity.parse(Integer.toString(total)), GPU_MEMORY);

    assertThat(share).isEqualTo(new MpsLimits(percent, mib));
  }

  private static PreparedClaim prepared(String name, String... env) {
    StringBuilder spec =
        new StringBuilder("{\"devices\":[{\"name\":\"x\",\"containerEdits\":{\"env\":[");
    spec.append("\"CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps\"");
    for (String e : env) {
      spec.append(",\"").append(e).append('"');
    }
    spec.append("]}}]}");
    return new PreparedClaim(
        new ClaimRef("ns", "uid-" + name, name), List.of(), "f-" + name, spec.toString(), "");
  }

  static Stream<Arguments> ceilings() {
    MpsLimits quarter = new MpsLimits(25, 20480);
    PreparedClaim half =
        prepared("half", MpsLimits.env(new MpsLimits(50, 40960)).toArray(String[]::new));
    PreparedClaim small =
        prepared("small", MpsLimits.env(new MpsLimits(13, 10240)).toArray(String[]::new));
    PreparedClaim older = prepared("older", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25");
    return Stream.of(
        Arguments.of("alone: its own share", quarter, List.of(), quarter),
        Arguments.of(
            "beside a larger share: the larger", quarter, List.of(half), new MpsLimits(50, 40960)),
        Arguments.of("beside smaller ones: its own", quarter, List.of(small), quarter),
        Arguments.of(
            "beside a claim prepared before shares were recorded: the whole GPU",
            quarter,
            List.of(older),
            new MpsLimits(100, 81920)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("ceilings")
  void theDaemonEnforcesTheLargestShareOfItsClaims(
      String why, MpsLimits share, List<PreparedClaim> others, MpsLimits expected) {
    assertThat(MpsLimits.ceiling(share, others, GPU_MEMORY)).isEqualTo(expected);
  }
}
