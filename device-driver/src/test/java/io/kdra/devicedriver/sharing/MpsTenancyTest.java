package io.kdra.devicedriver.sharing;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.prepare.PreparedClaim;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which namespaces' claims may share a node's MPS daemons (one /dev/shm for all of them). */
class MpsTenancyTest {
  private static final String MPS_SPEC =
      "{\"devices\":[{\"name\":\"x\",\"containerEdits\":{\"env\":[\"KDRA_DEVICE_0=gpu-0\","
          + "\"CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps\"]}}]}";
  private static final String PLAIN_SPEC =
      "{\"devices\":[{\"name\":\"x\",\"containerEdits\":{\"env\":[\"KDRA_DEVICE_0=gpu-2\"]}}]}";

  private static PreparedClaim prepared(String namespace, String name, String spec) {
    return new PreparedClaim(
        new ClaimRef(namespace, "uid-" + name, name), List.of(), "f-" + name, spec, "");
  }

  static Stream<Arguments> cases() {
    PreparedClaim mpsOfA = prepared("team-a", "train", MPS_SPEC);
    PreparedClaim mpsOfB = prepared("team-b", "infer", MPS_SPEC);
    PreparedClaim exclusiveOfA = prepared("team-a", "whole", PLAIN_SPEC);
    PreparedClaim recovered = prepared("", "lost", MPS_SPEC);
    return Stream.of(
        Arguments.of("first MPS claim on the node", List.of(), false, null),
        Arguments.of("same namespace", List.of(mpsOfB), false, null),
        Arguments.of("another namespace's MPS claim", List.of(mpsOfA), false, "team-a/train"),
        Arguments.of("another namespace, allowed", List.of(mpsOfA), true, null),
        Arguments.of("another namespace without MPS", List.of(exclusiveOfA), false, null),
        Arguments.of("the same namespace and another", List.of(mpsOfB, mpsOfA), false, "team-a"),
        Arguments.of(
            "an entry rebuilt without its namespace", List.of(recovered), false, "uid-lost"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void aClaimOfTeamBIsRefusedOnlyBesideOtherNamespacesMpsClaims(
      String why, List<PreparedClaim> others, boolean acrossNamespaces, String named) {
    Optional<String> refusal =
        MpsTenancy.refusal(new ClaimRef("team-b", "uid-new", "new"), others, acrossNamespaces);

    if (named == null) {
      assertThat(refusal).isEmpty();
    } else {
      assertThat(refusal)
          .get()
          .asString()
          .contains(named)
          .contains("/dev/shm")
          .contains("kdra.device-driver.sharing.mps-across-namespaces");
    }
  }
}
