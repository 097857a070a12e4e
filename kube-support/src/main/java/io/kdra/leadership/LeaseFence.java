package io.kdra.leadership;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.jboss.logging.Logger;

/**
 * A second opinion on leadership before each write: the replica may write only while the Lease
 * names it as holder and its own last renewal is younger than the renew deadline, by this process's
 * clock. The elector alone can be late to notice a lost Lease: a process starved of CPU (seen at
 * load 24 on two cores) resumes with its renew loop behind, and for a moment two replicas both
 * think they lead, each creating and allocating claims from its own informers. A standby takes the
 * Lease only after a whole lease duration without renewal, and the renew deadline is shorter than
 * that, so a leader that stops writing at the deadline has stopped before anyone else starts; one
 * whose renewals the informer has not shown yet pauses instead, which costs time, never a device.
 *
 * <p>Reads the Lease from an informer (one object); {@link #open()} without election.
 */
public final class LeaseFence implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(LeaseFence.class);

  private final String identity;
  private final Duration renewDeadline;
  private final Clock clock;
  private final SharedIndexInformer<Lease> informer;
  private volatile String holder;
  private volatile Instant renewed;

  private LeaseFence(
      String identity, Duration renewDeadline, Clock clock, SharedIndexInformer<Lease> informer) {
    this.identity = identity;
    this.renewDeadline = renewDeadline;
    this.clock = clock;
    this.informer = informer;
  }

  /** A fence that never closes: one replica without election. */
  public static LeaseFence open() {
    return new LeaseFence(null, null, Clock.systemUTC(), null);
  }

  /** Watches Lease {@code namespace/name} for {@code identity}. */
  public static LeaseFence watching(
      KubernetesClient client,
      String namespace,
      String name,
      String identity,
      Duration renewDeadline,
      Clock clock) {
    SharedIndexInformer<Lease> informer =
        client.leases().inNamespace(namespace).withName(name).runnableInformer(0);
    LeaseFence fence = new LeaseFence(identity, renewDeadline, clock, informer);
    informer.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(Lease lease) {
            fence.observe(lease);
          }

          @Override
          public void onUpdate(Lease old, Lease lease) {
            fence.observe(lease);
          }

          @Override
          public void onDelete(Lease lease, boolean unknown) {
            fence.observe(null);
          }
        });
    // keep trying, and do not wait for the first list: the fence stays closed until the Lease is
    // seen, and an API server not reachable yet must not keep the service from starting
    informer.exceptionHandler(
        (started, error) -> {
          LOG.debugf("watching Lease %s/%s: %s; retrying", namespace, name, error.toString());
          return true;
        });
    informer.start();
    return fence;
  }

  private void observe(Lease lease) {
    boolean known = lease != null && lease.getSpec() != null;
    holder = known ? lease.getSpec().getHolderIdentity() : null;
    renewed =
        known && lease.getSpec().getRenewTime() != null
            ? lease.getSpec().getRenewTime().toInstant()
            : null;
  }

  /** Whether this replica may write now; logs why not. */
  public boolean mayWrite() {
    if (informer == null) {
      return true;
    }
    boolean may = mayWrite(identity, holder, renewed, renewDeadline, clock.instant());
    if (!may) {
      LOG.debugf(
          "not writing: the Lease names %s, renewed %s; this replica is %s (deadline %s)",
          holder, renewed, identity, renewDeadline);
    }
    return may;
  }

  /** The rule: held by {@code identity}, renewed less than {@code deadline} before {@code now}. */
  static boolean mayWrite(
      String identity, String holder, Instant renewed, Duration deadline, Instant now) {
    return identity != null
        && identity.equals(holder)
        && renewed != null
        && now.isBefore(renewed.plus(deadline));
  }

  @Override
  public void close() {
    if (informer != null) {
      informer.close();
    }
  }
}
