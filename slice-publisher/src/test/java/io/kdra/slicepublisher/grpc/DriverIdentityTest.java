package io.kdra.slicepublisher.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.kdra.slicepublisher.grpc.DriverIdentity.Review;
import io.kdra.slicepublisher.grpc.DriverIdentity.Verdict;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class DriverIdentityTest {

  private static final DriverIdentity IDENTITY =
      new DriverIdentity(Set.of("kdra:kdra-device-driver"), "kdra-slice-publisher");
  private static final String DRIVER = "system:serviceaccount:kdra:kdra-device-driver";
  private static final Map<String, List<String>> ON_NODE_A =
      Map.of(
          DriverIdentity.POD_NAME,
          List.of("driver-x"),
          DriverIdentity.NODE_NAME,
          List.of("node-a"));
  private static final List<String> AUDIENCE = List.of("kdra-slice-publisher");

  static Stream<Arguments> reviews() {
    return Stream.of(
        arguments(
            "the driver's pod on node-a",
            new Review(true, null, DRIVER, ON_NODE_A, AUDIENCE),
            new Verdict.Driver("node-a", "kdra", "driver-x")),
        arguments(
            "before 1.30 the token names only the pod",
            new Review(
                true, null, DRIVER, Map.of(DriverIdentity.POD_NAME, List.of("driver-x")), AUDIENCE),
            new Verdict.Driver(null, "kdra", "driver-x")),
        arguments(
            "not authenticated (expired, or for another audience)",
            new Review(false, "token has expired", null, null, null),
            new Verdict.Refused(
                "token not authenticated for audience \"kdra-slice-publisher\": "
                    + "token has expired")),
        arguments(
            "valid, but for other audiences only",
            new Review(true, null, DRIVER, ON_NODE_A, List.of("https://kubernetes.default.svc")),
            new Verdict.Refused(
                "token of "
                    + DRIVER
                    + " (pod driver-x on node node-a) is for "
                    + "[https://kubernetes.default.svc], not for \"kdra-slice-publisher\"")),
        arguments(
            // the TokenReview API: no audiences means the API server's own, not ours
            "valid, with no audiences named",
            new Review(true, null, DRIVER, ON_NODE_A, List.of()),
            new Verdict.Refused(
                "token of "
                    + DRIVER
                    + " (pod driver-x on node node-a) is for the API server's audiences, not for"
                    + " \"kdra-slice-publisher\"")),
        arguments(
            "another ServiceAccount's pod on the node",
            new Review(true, null, "system:serviceaccount:apps:web", ON_NODE_A, AUDIENCE),
            new Verdict.Refused(
                "token of system:serviceaccount:apps:web (pod driver-x on node "
                    + "node-a) is not the device-driver's ServiceAccount [kdra:kdra-device-driver]")),
        arguments(
            "the right name in another namespace",
            new Review(
                true, null, "system:serviceaccount:other:kdra-device-driver", ON_NODE_A, AUDIENCE),
            new Verdict.Refused(
                "token of system:serviceaccount:other:kdra-device-driver (pod "
                    + "driver-x on node node-a) is not the device-driver's ServiceAccount "
                    + "[kdra:kdra-device-driver]")),
        arguments(
            "a user, not a ServiceAccount",
            new Review(true, null, "alice", Map.of(), AUDIENCE),
            new Verdict.Refused("token of alice is not a ServiceAccount's")),
        arguments(
            "a legacy Secret token names no pod",
            new Review(true, null, DRIVER, Map.of(), AUDIENCE),
            new Verdict.Refused("token of " + DRIVER + " is not bound to a pod")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("reviews")
  void judges(String name, Review review, Verdict expected) {
    assertThat(IDENTITY.judge(review)).isEqualTo(expected);
  }

  @org.junit.jupiter.api.Test
  void withoutConfiguredServiceAccountsNobodyReportsAndTheReasonSaysWhatToSet() {
    assertThat(
            new DriverIdentity(Set.of(), "kdra-slice-publisher")
                .judge(new Review(true, null, DRIVER, ON_NODE_A, AUDIENCE)))
        .isEqualTo(
            new Verdict.Refused(
                "token of "
                    + DRIVER
                    + " (pod driver-x on node node-a) "
                    + "is not the device-driver's ServiceAccount (none is configured: set "
                    + "kdra.slice-publisher.auth.service-accounts)"));
  }
}
