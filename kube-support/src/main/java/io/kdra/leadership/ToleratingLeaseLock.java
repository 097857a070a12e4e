package io.kdra.leadership;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * fabric8's Lease lock, made safe for the elector's loops. fabric8's elector retries only after a
 * {@link KubernetesClientException}; any other exception ends its loop for good, silently for a
 * standby: the replica stays Ready and never campaigns again. Its own lock throws one for a Lease
 * whose times or duration are missing (written by {@code kubectl}, a GitOps tool, a chart), so such
 * a Lease stopped every replica's election at once. This lock reads a Lease as client-go does (a
 * missing field is its zero value: no holder, never renewed, a duration of zero, so the Lease can
 * be taken), and reports any other unexpected failure as a {@link KubernetesClientException}, which
 * the elector logs and retries at its next period.
 */
final class ToleratingLeaseLock extends LeaseLock {
  private static final ZonedDateTime NEVER = ZonedDateTime.ofInstant(Instant.EPOCH, ZoneOffset.UTC);

  ToleratingLeaseLock(String namespace, String name, String identity) {
    super(namespace, name, identity);
  }

  @Override
  protected LeaderElectionRecord toRecord(Lease lease) {
    LeaseSpec spec = Optional.ofNullable(lease.getSpec()).orElseGet(LeaseSpec::new);
    return new LeaderElectionRecord(
        spec.getHolderIdentity(),
        Duration.ofSeconds(Optional.ofNullable(spec.getLeaseDurationSeconds()).orElse(0)),
        Optional.ofNullable(spec.getAcquireTime()).orElse(NEVER),
        Optional.ofNullable(spec.getRenewTime()).orElse(NEVER),
        Optional.ofNullable(spec.getLeaseTransitions()).orElse(0));
  }

  @Override
  public synchronized LeaderElectionRecord get(KubernetesClient client) {
    return retriable("read", () -> super.get(client));
  }

  @Override
  public synchronized void create(KubernetesClient client, LeaderElectionRecord record) {
    retriable(
        "create",
        () -> {
          super.create(client, record);
          return null;
        });
  }

  @Override
  public synchronized void update(KubernetesClient client, LeaderElectionRecord record) {
    retriable(
        "update",
        () -> {
          super.update(client, record);
          return null;
        });
  }

  private <T> T retriable(String action, Supplier<T> call) {
    try {
      return call.get();
    } catch (KubernetesClientException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new KubernetesClientException(
          "could not " + action + " the Lease (" + describe() + "): " + e, e);
    }
  }
}
