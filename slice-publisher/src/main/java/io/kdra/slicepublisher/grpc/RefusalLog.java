package io.kdra.slicepublisher.grpc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Logs each distinct refusal of a driver stream once at WARN (the reason names who and why), and
 * its repeats at DEBUG: a refused driver retries with backoff forever, and the first line says all
 * there is to say. Bounded: past {@value #MAX_REMEMBERED} distinct reasons it forgets them all and
 * starts again. Thread-safe.
 */
final class RefusalLog {

  static final int MAX_REMEMBERED = 1000;
  private static final Logger LOG = Logger.getLogger(RefusalLog.class);

  private final Set<String> seen = ConcurrentHashMap.newKeySet();

  /**
   * @return whether this was the first time (logged at WARN)
   */
  boolean refused(String code, String reason) {
    String line = code + " " + reason;
    if (seen.size() >= MAX_REMEMBERED) {
      seen.clear();
    }
    if (seen.add(line)) {
      LOG.warnf("refusing inventory stream: %s (repeats are logged at DEBUG)", line);
      return true;
    }
    LOG.debugf("refusing inventory stream again: %s", line);
    return false;
  }
}
