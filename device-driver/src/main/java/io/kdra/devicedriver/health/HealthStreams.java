package io.kdra.devicedriver.health;

import io.kdra.devicedriver.discovery.DiscoveryPass;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * Fans device health out to every open health stream: a new stream gets the current report right
 * away, and all streams get each report {@link HealthReporting#mustSend} lets through. Fed by the
 * discovery passes ({@link #onPass}); knows nothing of gRPC.
 *
 * <p>Thread-safe. Subscribers are called under this object's lock, one at a time, so they must not
 * block (they hand the message to their transport and return).
 */
public final class HealthStreams {
  private static final Logger LOG = Logger.getLogger(HealthStreams.class);

  /** One open stream. */
  public interface Subscriber {
    /**
     * Sends a report.
     *
     * @return false when the stream has gone; it is then dropped
     */
    boolean send(HealthReport report);
  }

  private final HealthReporting reporting;
  private final Set<Subscriber> subscribers = new LinkedHashSet<>();
  private HealthReport current = HealthReport.EMPTY;
  private Instant currentAt = Instant.MIN;
  private HealthReport lastSent;
  private Instant lastSentAt = Instant.MIN;

  public HealthStreams(HealthReporting reporting) {
    this.reporting = reporting;
  }

  /** Takes a discovery pass in; passes older than the last one seen are ignored. */
  public synchronized void onPass(DiscoveryPass pass) {
    if (pass.finishedAt().isBefore(currentAt)) {
      return;
    }
    HealthReport next = reporting.report(pass);
    current = next;
    currentAt = pass.finishedAt();
    if (reporting.mustSend(lastSent, lastSentAt, next, currentAt)) {
      lastSent = next;
      lastSentAt = currentAt;
      subscribers.removeIf(s -> !deliver(s, next));
    }
  }

  /** Opens a stream: sends it the current report and then every report sent to all. */
  public synchronized void subscribe(Subscriber subscriber) {
    if (deliver(subscriber, current)) {
      subscribers.add(subscriber);
    }
  }

  /** Closes a stream (cancelled by the kubelet, or the server stops); idempotent. */
  public synchronized void unsubscribe(Subscriber subscriber) {
    subscribers.remove(subscriber);
  }

  /** The open streams (health checks and tests: a cancelled stream must not stay). */
  public synchronized int streams() {
    return subscribers.size();
  }

  /** The latest report, sent or not. */
  public synchronized HealthReport current() {
    return current;
  }

  private static boolean deliver(Subscriber s, HealthReport report) {
    try {
      return s.send(report);
    } catch (RuntimeException e) {
      LOG.warnf("dropping a health stream that failed to send: %s", e.toString());
      return false;
    }
  }
}
