package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.OperatorException;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.EventHandler;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.ResourceEventAware;
import java.time.Duration;
import java.util.Set;
import java.util.function.BiFunction;
import org.jboss.logging.Logger;

/**
 * The event source that joins two controllers over {@link SharedInformer}s: it passes every event
 * of its own controller's primary informer ({@code own}, which the operator SDK broadcasts to
 * {@link ResourceEventAware} sources) to the other controller, and maps each event of the other's
 * primary informer ({@code peer}) to primaries of its own to reconcile. Its start, which the
 * operator SDK runs after its controller's primary informer has synced, marks {@code own} synced
 * and waits until {@code peer} is: no reconcile of either controller runs on a half-filled cache of
 * the other's (the controllers start in parallel).
 *
 * @param <P> this controller's primary
 * @param <S> the other controller's primary
 */
final class PeerEventSource<P extends HasMetadata, S extends HasMetadata>
    extends AbstractEventSource<S, P> implements ResourceEventAware<P> {

  private static final Logger LOG = Logger.getLogger(PeerEventSource.class);

  private final SharedInformer<P> own;
  private final SharedInformer<S> peer;
  private final BiFunction<S, Boolean, Set<ResourceID>> toPrimaries;
  private final Duration syncTimeout;

  /**
   * @param toPrimaries for an event of {@code peer} (its resource, whether a delete), the primaries
   *     of this controller it concerns
   */
  PeerEventSource(
      Class<S> peerType,
      SharedInformer<P> own,
      SharedInformer<S> peer,
      BiFunction<S, Boolean, Set<ResourceID>> toPrimaries,
      Duration syncTimeout) {
    super(peerType, "shared-" + peer.kind() + "-informer");
    this.own = own;
    this.peer = peer;
    this.toPrimaries = toPrimaries;
    this.syncTimeout = syncTimeout;
    peer.subscribe(this::onPeerEvent);
  }

  private void onPeerEvent(S resource, boolean deleted) {
    EventHandler handler = getEventHandler();
    if (handler == null) {
      return; // not registered (yet): the primaries' own initial events reconcile them all
    }
    for (ResourceID id : toPrimaries.apply(resource, deleted)) {
      handler.handleEvent(new Event(id));
    }
  }

  @Override
  public void start() throws OperatorException {
    own.markSynced();
    try {
      if (!peer.awaitSynced(syncTimeout)) {
        // its informer keeps retrying; nothing is written until it has listed (SyncedInformers)
        LOG.warnf(
            "the %s informer has not listed within %s; starting, writing once it has",
            peer.kind(), syncTimeout);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new OperatorException("interrupted waiting for the " + peer.kind() + " informer", e);
    }
    super.start();
  }

  @Override
  public void onResourceCreated(P resource) {
    own.publish(resource, false);
  }

  @Override
  public void onResourceUpdated(P newResource, P oldResource) {
    own.publish(newResource, false);
  }

  @Override
  public void onResourceDeleted(P resource) {
    own.publish(resource, true);
  }

  /** Nothing is read through the context: the caches are read directly. */
  @Override
  public Set<S> getSecondaryResources(P primary) {
    return Set.of();
  }
}
