package io.kdra.leadership;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.EventHandler;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.jboss.logging.Logger;

/**
 * An operator SDK event source that, each time this replica starts leading, reconciles every
 * primary that needs work: the objects that a standby's reconciles left alone ({@link
 * FencedWrite#AWAIT_LEADERSHIP}) instead of retrying them for as long as another replica led.
 * Nothing while the source is stopped.
 */
public final class LeadershipRequeue<P extends HasMetadata> extends AbstractEventSource<Void, P> {
  private static final Logger LOG = Logger.getLogger(LeadershipRequeue.class);

  private final Supplier<Stream<ResourceID>> needingWork;

  /**
   * @param needingWork the primaries to reconcile once this replica leads, read from the caches at
   *     that moment
   */
  public LeadershipRequeue(Leadership leadership, Supplier<Stream<ResourceID>> needingWork) {
    super(Void.class, "leadership-requeue");
    this.needingWork = needingWork;
    leadership.whenLeading(this::requeue);
  }

  /** Reconciles every primary that needs work; what the election calls on each win. */
  void requeue() {
    EventHandler handler = getEventHandler();
    if (!isRunning() || handler == null) {
      return;
    }
    long[] count = {0};
    needingWork
        .get()
        .forEach(
            id -> {
              handler.handleEvent(new Event(id));
              count[0]++;
            });
    LOG.debugf("leading: %d objects reconciled again", count[0]);
  }

  @Override
  public Set<Void> getSecondaryResources(P primary) {
    return Set.of();
  }
}
