package io.kdra.leadership;

import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.health.InformerHealthIndicator;
import io.javaoperatorsdk.operator.health.InformerWrappingEventSourceHealthIndicator;
import java.util.Collection;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Whether every informer of an operator's controllers has listed once. The services let their
 * informers retry a failed first list (a slow or absent API server at start-up) rather than stop
 * the process, so the operator may start reconciling while some caches are still empty; a service
 * writes nothing until all are full: a device would otherwise look free only because the claim
 * holding it is not listed yet, or a generated object look unwanted because its source is not.
 * Thread-safe.
 */
public final class SyncedInformers {

  private static final Logger LOG = Logger.getLogger(SyncedInformers.class);

  private final Supplier<Operator> operator;
  private volatile boolean synced;

  /** {@code operator} is asked when first needed: it is built from the reconcilers that ask. */
  public SyncedInformers(Supplier<Operator> operator) {
    this.operator = operator;
  }

  /**
   * True once every informer has listed; stays true (a relist keeps the cache until it is done).
   */
  public boolean synced() {
    if (synced) {
      return true;
    }
    Collection<RegisteredController> controllers =
        operator.get().getRuntimeInfo().getRegisteredControllers();
    boolean all = !controllers.isEmpty();
    for (RegisteredController<?> c : controllers) {
      all &= allListed(c.getControllerHealthInfo().informerEventSourceHealthIndicators().values());
    }
    if (all) {
      LOG.info("every informer has listed: writing from now on");
      synced = true;
    }
    return all;
  }

  /** Whether each informer behind these event sources has listed once. */
  @SuppressWarnings("rawtypes")
  static boolean allListed(Collection<InformerWrappingEventSourceHealthIndicator> sources) {
    for (InformerWrappingEventSourceHealthIndicator<?> s : sources) {
      for (InformerHealthIndicator i : s.informerHealthIndicators().values()) {
        if (!i.hasSynced()) {
          return false;
        }
      }
    }
    return true;
  }
}
