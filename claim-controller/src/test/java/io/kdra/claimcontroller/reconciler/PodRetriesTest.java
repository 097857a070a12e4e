package io.kdra.claimcontroller.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kdra.claimcontroller.domain.K;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class PodRetriesTest {

  final Map<ResourceID, Pod> cache = new ConcurrentHashMap<>();
  final List<ResourceID> woken = new CopyOnWriteArrayList<>();
  final PodRetries retries = new PodRetries(id -> Optional.ofNullable(cache.get(id)));

  @BeforeEach
  void start() {
    retries.setEventHandler(e -> woken.add(e.getRelatedCustomResourceID()));
    retries.start();
  }

  @AfterEach
  void stop() {
    retries.stop();
  }

  static Pod pod(String name, String uid) {
    return new PodBuilder(K.pod(name).build()).editMetadata().withUid(uid).endMetadata().build();
  }

  Pod cached(String name, String uid) {
    Pod p = pod(name, uid);
    cache.put(ResourceID.fromResource(p), p);
    return p;
  }

  /** Retries {@code control} last: once it is woken, every earlier retry has run. */
  void awaitAfter(Pod control) {
    retries.after(control, Duration.ofMillis(200));
    await().atMost(Duration.ofSeconds(30)).until(() -> woken.contains(id(control)));
  }

  static ResourceID id(Pod p) {
    return ResourceID.fromResource(p);
  }

  @Test
  void aRetryWakesItsPod() {
    Pod twin = cached("twin", "uid-1");
    retries.after(twin, Duration.ZERO);
    awaitAfter(cached("control", "uid-c"));
    assertThat(woken).containsExactly(id(twin), new ResourceID("control", K.NS));
    assertThat(retries.pendingFor("uid-1")).isFalse();
  }

  @Test
  void aRetryOfAPodGoneOrReplacedUnderItsNameWakesNothing() {
    Pod deleted = pod("gone", "uid-1");
    Pod replaced = pod("twin", "uid-2");
    cached("twin", "uid-3");
    retries.after(deleted, Duration.ZERO);
    retries.after(replaced, Duration.ZERO);
    Pod control = cached("control", "uid-c");
    awaitAfter(control);
    assertThat(woken).containsExactly(id(control));
  }

  @Test
  void aLaterRetryReplacesThePendingOneAndForgetDropsIt() {
    Pod twin = cached("twin", "uid-1");
    retries.after(twin, Duration.ofHours(1));
    retries.after(twin, Duration.ZERO);
    // an hour, so that the forget comes first however late this thread runs
    Pod other = cached("other", "uid-2");
    retries.after(other, Duration.ofHours(1));
    assertThat(retries.pendingFor("uid-2")).isTrue();
    retries.forget(other);
    assertThat(retries.pendingFor("uid-2")).isFalse();
    awaitAfter(cached("control", "uid-c"));
    assertThat(woken).containsExactly(id(twin), new ResourceID("control", K.NS));
    assertThat(retries.pendingFor("uid-1")).isFalse();
  }
}
