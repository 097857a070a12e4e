package io.kdra.claimcontroller.reconciler;

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
import java.util.concurrent.CountDownLatch;

/**
 * A {@link ClaimWriter} whose next claim creation a test can hold (until released, then answered
 * without writing, as if the claim were created) or fail once; every other write goes to the API
 * server. Enabled by {@link RecreatedPodTest}'s profile only.
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

  private volatile Next next = Next.WRITE;
  final CountDownLatch holding = new CountDownLatch(1);
  final CountDownLatch release = new CountDownLatch(1);
  final CountDownLatch failed = new CountDownLatch(1);
  volatile Thread failedOn;

  public GatedClaimWriter(KubernetesClient client, ClaimControllerConfig config) {
    super(client, config.schedulerName(), config.retry().conflictRetries());
  }

  void next(Next what) {
    next = what;
  }

  @Override
  public ResourceClaim create(ResourceClaim desired, Map<String, String> annotations) {
    Next now;
    synchronized (this) {
      now = next;
      next = Next.WRITE;
    }
    switch (now) {
      case HOLD -> {
        holding.countDown();
        try {
          release.await();
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
