package io.kdra.slicepublisher.k8s;

import com.google.common.util.concurrent.RateLimiter;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.core.model.TraceAnnotation;
import io.kdra.slicepublisher.domain.DisabledFeatures;
import io.kdra.slicepublisher.domain.SliceWrite;
import io.kdra.slicepublisher.observability.PublisherMetrics;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.jboss.logging.Logger;

/**
 * Issues the writes of one pool plan against the API server, at a bounded rate, each with
 * optimistic concurrency: updates carry the resourceVersion read and deletes carry uid and
 * resourceVersion preconditions, so nothing is overwritten that changed since it was read.
 *
 * <p>Stops at the first failure and reports it; the caller re-plans the pool from fresh state (that
 * is the retry on conflict: a conflict means the plan was made from stale state, so re-sending the
 * same write would be wrong). Called from one thread at a time.
 *
 * <p>A created or updated slice carries the context of the span current while writing (the pool's
 * reconcile) in {@link TraceAnnotation#KEY}, so that the spans of claims allocated from it can link
 * to the write that published their devices. The planner compares content only, so the annotation
 * never causes a write of its own.
 */
public final class SliceWriter {

  private static final Logger LOG = Logger.getLogger(SliceWriter.class);
  private static final int CONFLICT = 409;
  private static final int NOT_FOUND = 404;

  private final KubernetesClient client;
  private final ClusterCache cache;
  private final PublisherMetrics metrics;
  private final RateLimiter limiter;
  private final DroppedFields dropped;
  private final BooleanSupplier mayWrite;

  /**
   * @param maxWritesPerSecond upper bound on writes per second; bursts of one second allowed
   * @param mayWrite asked right before each write: whether this replica's Lease is still fresh
   *     ({@code LeaseFence})
   */
  public SliceWriter(
      KubernetesClient client,
      ClusterCache cache,
      PublisherMetrics metrics,
      DroppedFields dropped,
      double maxWritesPerSecond,
      BooleanSupplier mayWrite) {
    this.mayWrite = mayWrite;
    if (!(maxWritesPerSecond > 0)) {
      throw new IllegalArgumentException(
          "kdra.slice-publisher.max-writes-per-second must be positive, got " + maxWritesPerSecond);
    }
    this.client = client;
    this.cache = cache;
    this.metrics = metrics;
    this.dropped = dropped;
    this.limiter = RateLimiter.create(maxWritesPerSecond);
  }

  /** What became of a plan. */
  public enum Outcome {
    /** Every write succeeded (or there were none). */
    DONE,
    /** A write met a newer version of the slice, or a name already taken: re-plan soon. */
    CONFLICT,
    /** A write failed otherwise: retry with backoff. */
    FAILED,
    /**
     * Nothing more was written: this replica's Lease is not fresh. Retried with backoff; if another
     * replica leads, the elector soon stops this one's writing altogether.
     */
    NOT_LEADING
  }

  /** Issues {@code writes} in order; blocks while the rate limit requires. */
  public Outcome apply(List<SliceWrite> writes) {
    for (SliceWrite w : writes) {
      limiter.acquire();
      if (!mayWrite.getAsBoolean()) {
        LOG.debugf("not writing ResourceSlice %s: this replica's Lease is not fresh", w.name());
        return Outcome.NOT_LEADING;
      }
      try {
        write(w);
      } catch (KubernetesClientException e) {
        cache.forget(w.name());
        if (e.getCode() == CONFLICT
            || (e.getCode() == NOT_FOUND && w instanceof SliceWrite.Update)) {
          metrics.conflict();
          LOG.debugf("conflict writing ResourceSlice %s: %s", w.name(), e.getMessage());
          return Outcome.CONFLICT;
        }
        metrics.failure();
        LOG.warnf(
            "writing ResourceSlice %s failed (HTTP %d): %s", w.name(), e.getCode(), e.getMessage());
        return Outcome.FAILED;
      }
    }
    return Outcome.DONE;
  }

  private void stored(ResourceSlice sent, ResourceSlice returned) {
    cache.wrote(returned);
    if (dropped.record(sent, returned)) {
      metrics.droppedFields();
      List<String> disabled = DisabledFeatures.between(sent, returned);
      LOG.warnf(
          "the API server dropped fields of ResourceSlice %s, probably because %s (what needs"
              + " them is unavailable on this cluster); keeping what it stored until the content"
              + " changes",
          returned.getMetadata().getName(),
          disabled.isEmpty()
              ? "a feature gate is off there"
              : "these features are off there: " + String.join(", ", disabled));
    }
  }

  private void write(SliceWrite w) {
    var slices = client.resources(ResourceSlice.class);
    if (w instanceof SliceWrite.Create c) {
      traced(c.slice());
      stored(c.slice(), slices.resource(c.slice()).create());
      metrics.created();
    } else if (w instanceof SliceWrite.Update u) {
      // update() sends the resourceVersion of the object: the API server refuses it with 409
      // when the slice changed since it was read.
      traced(u.slice());
      stored(u.slice(), slices.resource(u.slice()).update());
      metrics.updated();
    } else if (w instanceof SliceWrite.Delete d) {
      var target = slices.withName(d.name());
      boolean gone =
          !(d.resourceVersion() == null
                  ? target.delete()
                  : target.lockResourceVersion(d.resourceVersion()).delete())
              .isEmpty();
      cache.deleted(d.name(), d.resourceVersion());
      if (gone) {
        metrics.deleted();
      }
    }
  }

  /** Stamps the current span's context on a slice about to be written, if a span records. */
  private static void traced(ResourceSlice slice) {
    if (!Span.current().getSpanContext().isValid()) {
      return;
    }
    Map<String, String> headers = new HashMap<>();
    W3CTraceContextPropagator.getInstance().inject(Context.current(), headers, Map::put);
    String traceparent = headers.get("traceparent");
    if (traceparent == null) {
      return;
    }
    Map<String, String> annotations =
        slice.getMetadata().getAnnotations() == null
            ? new LinkedHashMap<>()
            : new LinkedHashMap<>(slice.getMetadata().getAnnotations());
    annotations.put(TraceAnnotation.KEY, traceparent);
    slice.getMetadata().setAnnotations(annotations);
  }
}
