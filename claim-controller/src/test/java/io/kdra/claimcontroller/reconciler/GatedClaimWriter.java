package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.config.ClaimControllerConfig;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Singleton;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link ClaimWriter} whose next claim creation a test can hold (until released, then answered
 * without writing, as if the claim were created) or fail once; every other write goes to the API
 * server. Counts the creations started for each owning pod. Enabled by {@link RecreatedPodTest}'s
 * profile only.
 */
@Alternative
@Singleton
public class GatedClaimWriter extends ClaimWriter {

  /** What the next creation does. */
  enum Next {
    WRITE,
    HOLD,
    FAIL
  }

  /** One held creation: {@code holding} once it waits, which ends at {@code release}. */
  static final class Hold {
    final CountDownLatch holding = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
  }

  private Next next = Next.WRITE;
  private Hold hold;
  private final Map<String, AtomicInteger> creations = new ConcurrentHashMap<>();
  final CountDownLatch failed = new CountDownLatch(1);
  volatile Thread failedOn;

  public GatedClaimWriter(KubernetesClient client, ClaimControllerConfig config) {
    super(client, config.schedulerName(), config.retry().conflictRetries());
  }

  synchronized void next(Next what) {
    next = what;
  }

  /** Holds the next creation; the returned hold tells when it waits and releases it. */
  synchronized Hold holdNext() {
    next = Next.HOLD;
    hold = new Hold();
    return hold;
  }

  /** How many creations of claims owned by the pod with this UID have started. */
  int creationsFor(String podUid) {
    AtomicInteger n = creations.get(podUid);
    return n == null ? 0 : n.get();
  }

  @Override
  public ResourceClaim create(ResourceClaim desired, Map<String, String> annotations) {
    if (desired.getMetadata().getOwnerReferences() != null) {
      for (OwnerReference o : desired.getMetadata().getOwnerReferences()) {
        creations.computeIfAbsent(o.getUid(), u -> new AtomicInteger()).incrementAndGet();
      }
    }
    Next now;
    Hold held;
    synchronized (this) {
      now = next;
      held = hold;
      next = Next.WRITE;
      hold = null;
    }
    switch (now) {
      case HOLD -> {
        held.holding.countDown();
        try {
          held.release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
        return new ResourceClaimBuilder(desired)
            .editMetadata()
            .withName(desired.getMetadata().getGenerateName() + "held")
            .withUid(UUID.randomUUID().toString())
            .withResourceVersion("1")
            .endMetadata()
            .build();
      }
      case FAIL -> {
        failedOn = Thread.currentThread();
        failed.countDown();
        throw new KubernetesClientException("injected failure", 500, null);
      }
      default -> {
        return super.create(desired, annotations);
      }
    }
  }
}
