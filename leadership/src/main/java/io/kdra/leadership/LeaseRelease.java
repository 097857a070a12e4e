package io.kdra.leadership;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Gives a Lease up the way client-go's {@code ReleaseOnCancel} does: no holder and a lease of one
 * second. An update (PUT) with the resourceVersion read, so that a Lease someone else took
 * meanwhile is never overwritten, and so that the holder is really removed (fabric8's own lock
 * writes a patch, in which an absent holder means "unchanged"). Candidates see no holder and take
 * the Lease at their next retry.
 */
public final class LeaseRelease {
  private static final Logger LOG = Logger.getLogger(LeaseRelease.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final String identity;

  public LeaseRelease(KubernetesClient client, String namespace, String name, String identity) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
    this.identity = identity;
  }

  /**
   * The Lease's namespace: the configured one, else the client's (the pod's own namespace).
   *
   * @param property the configuration property that names it, for the error message
   * @throws IllegalStateException when neither is known
   */
  public static String namespace(Optional<String> configured, KubernetesClient client,
      String property) {
    return configured.filter(s -> !s.isBlank())
        .or(() -> Optional.ofNullable(client.getNamespace()))
        .orElseThrow(() -> new IllegalStateException(property + " is not set and this "
            + "replica's own namespace is unknown; set it, or disable leader election for a "
            + "single replica"));
  }

  /** Releases the Lease if this identity holds it; true if it did. Never throws. */
  public boolean release() {
    try {
      Lease lease = client.leases().inNamespace(namespace).withName(name).get();
      if (lease == null || lease.getSpec() == null
          || !identity.equals(lease.getSpec().getHolderIdentity())) {
        return false;
      }
      lease.getSpec().setHolderIdentity(null);
      lease.getSpec().setLeaseDurationSeconds(1);
      lease.getSpec().setRenewTime(ZonedDateTime.now(ZoneOffset.UTC));
      client.leases().inNamespace(namespace).resource(lease).update();
      LOG.infof("released Lease %s/%s held by %s", namespace, name, identity);
      return true;
    } catch (KubernetesClientException e) {
      // a conflict means someone else has it now; otherwise the standby waits for expiry
      LOG.warnf("could not release Lease %s/%s: %s", namespace, name, e.getMessage());
      return false;
    }
  }
}
