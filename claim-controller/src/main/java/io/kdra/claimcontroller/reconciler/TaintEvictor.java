package io.kdra.claimcontroller.reconciler;

import io.kdra.claimcontroller.domain.TaintEvictionPlan;
import io.kdra.claimcontroller.domain.TaintRuleStatus;
import io.kdra.claimcontroller.k8s.TaintEvictionWriter;
import io.kdra.claimcontroller.scheduling.ClusterView;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.jboss.logging.Logger;

/**
 * Device-taint eviction where kube-controller-manager does not run it ({@code own} mode): each pass
 * plans from the informers ({@link TaintEvictionPlan}), evicts the pods that are due and writes the
 * rules' status. Passes run every {@link #TICK} (a pass over a cluster without NoExecute taints or
 * rules is a scan of the slices); only the leader writes.
 */
final class TaintEvictor {

  private static final Logger LOG = Logger.getLogger(TaintEvictor.class);

  /** How often a pass runs: the lateness of an eviction, and of a rule's status, at most. */
  static final Duration TICK = Duration.ofSeconds(1);

  private final ClusterView view;
  private final TaintEvictionWriter writer;
  private final EventRecorder events;
  private final BooleanSupplier mayWrite;
  private final Clock clock;

  /** Pods evicted per rule name since the start, for the status (as upstream counts them). */
  private final Map<String, Long> evictedByRule = new ConcurrentHashMap<>();

  TaintEvictor(
      ClusterView view,
      TaintEvictionWriter writer,
      EventRecorder events,
      BooleanSupplier mayWrite,
      Clock clock) {
    this.view = view;
    this.writer = writer;
    this.events = events;
    this.mayWrite = mayWrite;
    this.clock = clock;
  }

  /** One pass; never throws (a failed write is retried on the next pass). */
  void pass() {
    try {
      if (!mayWrite.getAsBoolean()) {
        return;
      }
      var rules = view.deviceTaintRules();
      Instant now = clock.instant();
      TaintEvictionPlan plan =
          TaintEvictionPlan.of(
              view.pods(),
              view::claim,
              rules.isEmpty() ? java.util.List.of() : view.claims(),
              view.slices(),
              rules,
              evictedByRule,
              now);
      for (TaintEvictionPlan.PodEviction e : plan.due()) {
        evict(e);
      }
      for (DeviceTaintRule rule : rules) {
        updateStatus(rule, plan, now);
      }
    } catch (RuntimeException e) {
      LOG.warnf(e, "device-taint eviction pass failed; retrying in %s", TICK);
    }
  }

  private void evict(TaintEvictionPlan.PodEviction e) {
    String why =
        e.why().causes().stream()
            .map(c -> c.describe())
            .distinct()
            .collect(java.util.stream.Collectors.joining(", "));
    try {
      if (!writer.evict(e.namespace(), e.name(), e.uid())) {
        return;
      }
    } catch (RuntimeException ex) {
      LOG.infof("evicting pod %s/%s failed (%s); next pass retries", e.namespace(), e.name(), ex);
      return;
    }
    LOG.infof("evicted pod %s/%s: NoExecute device taint (%s)", e.namespace(), e.name(), why);
    view.pod(e.namespace(), e.name())
        .ifPresent(p -> events.normal(p, "DeviceTaintManagerEviction", "Marking for deletion"));
    e.why().causes().stream()
        .map(c -> c.rule())
        .filter(r -> r != null)
        .distinct()
        .forEach(r -> evictedByRule.merge(r, 1L, Long::sum));
  }

  private void updateStatus(DeviceTaintRule rule, TaintEvictionPlan plan, Instant now) {
    TaintRuleStatus.Counts counts = plan.counts().get(rule.name());
    if (counts == null || !TaintRuleStatus.waitBeforeUpdate(rule, now).isZero()) {
      return;
    }
    var condition = TaintRuleStatus.condition(rule, counts, now);
    if (!TaintRuleStatus.differs(rule, condition)) {
      return;
    }
    try {
      writer.writeCondition(rule, condition);
    } catch (RuntimeException ex) {
      LOG.infof(
          "status of DeviceTaintRule %s not written (%s); next pass retries", rule.name(), ex);
    }
  }
}
