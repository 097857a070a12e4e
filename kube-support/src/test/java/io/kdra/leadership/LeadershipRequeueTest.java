package io.kdra.leadership;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The objects a standby left alone are reconciled again at each win of the election, and only then.
 */
class LeadershipRequeueTest {

  private final Leadership leadership =
      Leadership.elected("claim-controller", "controller-a", () -> {}, () -> {});
  private final List<ResourceID> handled = new CopyOnWriteArrayList<>();
  private final LeadershipRequeue<Pod> requeue =
      new LeadershipRequeue<>(
          leadership, () -> Stream.of(new ResourceID("a", "ns"), new ResourceID("b", "ns")));

  LeadershipRequeueTest() {
    requeue.setEventHandler((Event e) -> handled.add(e.getRelatedCustomResourceID()));
  }

  @Test
  void eachWinReconcilesEveryObjectThatNeedsWork() {
    requeue.start();
    leadership.callbacks().onNewLeader("controller-b");
    assertThat(handled).isEmpty();

    leadership.callbacks().onStartLeading();
    assertThat(handled).containsExactly(new ResourceID("a", "ns"), new ResourceID("b", "ns"));

    leadership.callbacks().onStopLeading();
    leadership.callbacks().onStartLeading();
    assertThat(handled).hasSize(4);
  }

  @Test
  void nothingWhileTheSourceIsStopped() {
    leadership.callbacks().onStartLeading();
    assertThat(handled).isEmpty();
  }
}
