package io.kdra.claimcontroller.scheduling;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kdra.claimcontroller.domain.K;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What each outcome writes, against the fabric8 mock API server (CRUD mode). */
@EnableKubernetesMockClient(crud = true)
class OutcomeRecorderTest {

  KubernetesClient client;

  private static Outcome unschedulable(String message) {
    Map<String, String> perClaim = new LinkedHashMap<>();
    perClaim.put("gpu-claim", "request \"gpu\": 0 devices free");
    perClaim.put("not-in-informer", "whatever");
    return new Outcome.Unschedulable(message, perClaim, "no-devices");
  }

  /**
   * Columns: outcome, the pod's PodScheduled=False message before (empty: no condition), the Events
   * expected ("Kind/name: message"), the failures counted, the condition's message after.
   */
  static Stream<Arguments> outcomes() {
    String msg = "0/1 nodes are available: claim gpu-claim cannot be allocated.";
    List<String> events =
        List.of("Pod/web: " + msg, "ResourceClaim/gpu-claim: request \"gpu\": 0 devices free");
    return Stream.of(
        Arguments.of(
            named("bound: nothing recorded", new Outcome.Bound("node-a")),
            Optional.empty(),
            List.of(),
            List.of(),
            Optional.empty()),
        Arguments.of(
            named("waiting: nothing recorded", new Outcome.Waiting("claim not yet")),
            Optional.empty(),
            List.of(),
            List.of(),
            Optional.empty()),
        Arguments.of(
            named("retry: nothing recorded", new Outcome.Retry("claim changed")),
            Optional.empty(),
            List.of(),
            List.of(),
            Optional.empty()),
        Arguments.of(
            named(
                "unschedulable, first time: condition, Events on pod and the"
                    + " claims the informer knows, one failure",
                unschedulable(msg)),
            Optional.empty(),
            events,
            List.of("no-devices"),
            Optional.of(msg)),
        Arguments.of(
            named("unschedulable with a new message: Events again", unschedulable(msg)),
            Optional.of("0/1 nodes are available: node-a is cordoned."),
            events,
            List.of("no-devices"),
            Optional.of(msg)),
        Arguments.of(
            named("unschedulable as before: counted, but no Event flood", unschedulable(msg)),
            Optional.of(msg),
            List.of(),
            List.of("no-devices"),
            Optional.of(msg)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("outcomes")
  void recordsWhatTheOutcomeMeans(
      Outcome outcome,
      Optional<String> before,
      List<String> expectedEvents,
      List<String> expectedFailures,
      Optional<String> after) {
    Pod pod = client.resource(K.pod("web").build()).create();
    if (before.isPresent()) {
      pod =
          client
              .resource(
                  new PodBuilder(pod)
                      .editOrNewStatus()
                      .addNewCondition()
                      .withType("PodScheduled")
                      .withStatus("False")
                      .withReason("Unschedulable")
                      .withMessage(before.get())
                      .endCondition()
                      .endStatus()
                      .build())
              .updateStatus();
    }
    client.resource(K.claim("gpu-claim").build()).create();
    List<String> failures = new ArrayList<>();
    OutcomeRecorder recorder =
        new OutcomeRecorder(
            new ApiView(client),
            new PodWriter(client, 3, Clock.systemUTC()),
            new EventRecorder(client, K.SCHEDULER, Clock.systemUTC()),
            failures::add);

    recorder.record(pod, outcome);

    assertThat(
            client.v1().events().inNamespace(NS).list().getItems().stream()
                .sorted(Comparator.comparing(e -> e.getInvolvedObject().getKind()))
                .peek(e -> assertThat(e.getReason()).isEqualTo("FailedScheduling"))
                .map(OutcomeRecorderTest::describe))
        .containsExactlyElementsOf(expectedEvents);
    assertThat(failures).isEqualTo(expectedFailures);
    Pod stored = client.pods().inNamespace(NS).withName("web").get();
    assertThat(
            Optional.ofNullable(stored.getStatus())
                .map(s -> s.getConditions())
                .flatMap(
                    cs -> cs.stream().filter(c -> c.getType().equals("PodScheduled")).findFirst())
                .map(c -> c.getMessage()))
        .isEqualTo(after);
  }

  private static String describe(Event e) {
    return e.getInvolvedObject().getKind()
        + "/"
        + e.getInvolvedObject().getName()
        + ": "
        + e.getMessage();
  }
}
