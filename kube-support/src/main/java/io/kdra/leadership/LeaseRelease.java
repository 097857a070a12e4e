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
  private static final int HTTP_CONFLICT = 409;
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
  public static String namespace(
      Optional<String> configured, KubernetesClient client, String property) {
    return configured
        .filter(s -> !s.isBlank())
        .or(() -> Optional.ofNullable(client.getNamespace()))
        .orElseThrow(
            () ->
                new IllegalStateException(
                    property
                        + " is not set and this "
                        + "replica's own namespace is unknown; set it, or disable leader election for a "
                        + "single replica"));
  }

  /** Attempts at most: a renewal of this replica's own that races the release is retried. */
  static final int ATTEMPTS = 3;

  /**
   * Releases the Lease if this identity holds it; true if it did. Never throws. A conflict with a
   * Lease still held by this identity is this replica's own elector renewing it in between (it
   * stops a moment later): the release reads the Lease again and retries.
   */
  public boolean release() {
    for (int attempt = 1; ; attempt++) {
      try {
        Lease lease = client.leases().inNamespace(namespace).withName(name).get();
        if (lease == null
            || lease.getSpec() == null
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
        if (e.getCode() == HTTP_CONFLICT && attempt < ATTEMPTS) {
          LOG.debugf("Lease %s/%s changed while being released; reading it again", namespace, name);
          continue;
        }
        // someone else has it now, or the API server is away: the standby waits for expiry
        LOG.warnf("could not release Lease %s/%s: %s", namespace, name, e.getMessage());
        return false;
      } catch (RuntimeException e) {
        // a client closed already: thrown, it would vanish in the elector's cancellation
        LOG.warnf("could not release Lease %s/%s: %s", namespace, name, e.toString());
        return false;
      }
    }
  }
}
