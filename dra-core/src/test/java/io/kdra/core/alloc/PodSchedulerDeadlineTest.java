package io.kdra.core.alloc;

import static io.kdra.core.alloc.AllocatorCases.ANY_GPU;
import static io.kdra.core.alloc.AllocatorCases.MEM_40;
import static io.kdra.core.testing.AllocFixtures.claim;
import static io.kdra.core.testing.AllocFixtures.deviceClass;
import static io.kdra.core.testing.AllocFixtures.firstAvailable;
import static io.kdra.core.testing.AllocFixtures.gpu;
import static io.kdra.core.testing.AllocFixtures.node;
import static io.kdra.core.testing.AllocFixtures.request;
import static io.kdra.core.testing.AllocFixtures.slice;
import static io.kdra.core.testing.AllocFixtures.sub;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.testing.Scenario;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pod search's deadline: asked before each node and every {@link Deadline#CHECK_EVERY} steps,
 * it stops a search whose step budget alone would let it run for hours, keeps the best node scored
 * so far, and leaves ordinary searches alone. Deadlines here pass after a number of questions, so
 * no clock is read.
 */
class PodSchedulerDeadlineTest {

  static final List<Node> NODES = List.of(node("node-a"), node("node-b"));

  /** node-a: sixteen 16Gi T4s; node-b: one 40Gi A100. */
  static Scenario cluster(long budget) {
    List<Device> t4s = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      t4s.add(gpu("g" + i, "T4", "16Gi", "p0"));
    }
    return Scenario.of(
            slice("a", "node-a", t4s.toArray(new Device[0])).build(),
            slice("b", "node-b", gpu("g0", "A100", "40Gi", "p0")).build())
        .withClasses(deviceClass("gpu", ANY_GPU), deviceClass("a100-40gb", ANY_GPU, MEM_40))
        .withBudget(budget);
  }

  /**
   * Valid but infeasible everywhere, found out only at the last request: six single GPUs, then
   * seventeen (more than any node has), so the search tries every arrangement of the six first.
   */
  static ResourceClaim pathological() {
    List<DeviceRequest> requests = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      requests.add(request("r" + i, "gpu").build());
    }
    requests.add(request("many", "gpu").withCount(17).build());
    return claim("patho", requests.toArray(new DeviceRequest[0])).build();
  }

  /** A deadline that passes at question {@code n + 1}: {@code n} questions answered "not yet". */
  static Deadline passingAfter(int n) {
    AtomicInteger asked = new AtomicInteger();
    return () -> asked.incrementAndGet() > n;
  }

  static Arguments tc(
      String name,
      long budget,
      Deadline deadline,
      ResourceClaim claim,
      String node,
      boolean timedOut,
      String outcome) {
    return arguments(named(name, cluster(budget)), deadline, claim, node, timedOut, outcome);
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        tc(
            "a pathological search stops at its deadline, with no diagnosis",
            Long.MAX_VALUE,
            passingAfter(5),
            pathological(),
            null,
            true,
            "!search exceeded its deadline before finding a node (2 nodes eligible)"),
        tc(
            "a deadline already passed stops even an easy search before its first node",
            Long.MAX_VALUE,
            passingAfter(0),
            claim("c", request("r", "gpu").build()).build(),
            null,
            true,
            "!search exceeded its deadline before finding a node (2 nodes eligible)"),
        tc(
            "an ordinary search asks once per node and finishes",
            Long.MAX_VALUE,
            passingAfter(1),
            claim("c", request("r", "gpu").build()).build(),
            "node-a",
            false,
            "gpu.example.com/"),
        tc(
            "the best node scored before the deadline wins",
            Long.MAX_VALUE,
            passingAfter(1),
            claim("c", firstAvailable("r", sub("big", "a100-40gb", 1), sub("any", "gpu", 1)))
                .build(),
            "node-a",
            false,
            "gpu.example.com/"),
        tc(
            "without a deadline the step budget still ends the search, diagnosed",
            1_000,
            Deadline.NONE,
            pathological(),
            null,
            false,
            "!search limit reached"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  @Timeout(60) // a failure guard: without the deadline the first case runs for hours
  void stopsAtTheDeadline(
      Scenario s,
      Deadline deadline,
      ResourceClaim claim,
      String node,
      boolean timedOut,
      String outcome) {
    PodScheduler.Searched searched =
        PodScheduler.search(s.allocator(), NODES, null, List.of(claim), List.of(), 0, deadline);
    assertThat(searched.timedOut()).isEqualTo(timedOut);
    if (timedOut) {
      assertThat(searched.placement()).as("answered without a diagnosis").isNotNull();
    }
    PodScheduler.Placement p = searched.explained();
    assertThat(p.node()).isEqualTo(node);
    assertThat(Scenario.brief(p.outcomes())).singleElement().asString().contains(outcome);
  }
}
