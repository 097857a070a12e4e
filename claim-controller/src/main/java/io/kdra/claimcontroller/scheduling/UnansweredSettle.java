package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * Settles allocations whose write ended without an answer ({@link
 * RecentWrites#allocationMayHaveLanded}) when no pod attempt does: the pod was deleted before its
 * next attempt, and nothing else writes its claim (a user's ResourceClaim), so the informer would
 * never show a newer version and the device would stay held in this replica's memory.
 *
 * <p>Each {@link #pass} (every few seconds, on the leader only) takes up the assumptions that have
 * stayed unanswered, unchanged, since the pass before, reads each claim from the API server (the
 * informer may lag) and does what {@link UnansweredDecision} says: forgets it when the claim is
 * gone, leaves it to the informer when the claim has moved past the write's version, or undoes the
 * attempt on the version the write was made on (as upstream's Unreserve), so that the claim's next
 * version settles it whichever write lands. The interval only says when to look; versions decide.
 */
public final class UnansweredSettle {

  private static final Logger LOG = Logger.getLogger(UnansweredSettle.class);

  private final RecentWrites recent;
  private final ClaimWriter claims;
  private final BooleanSupplier mayWrite;
  private final Consumer<String> counted;

  /** The assumptions unanswered at the pass before (by value: a new state is a new entry). */
  private Set<Object> seen = Set.of();

  /** The assumptions whose {@link UnansweredDecision.LeaveToInformer} was logged already. */
  private final Set<Object> reported = new HashSet<>();

  /**
   * @param mayWrite this replica leads and its informers have listed, asked before each write
   * @param counted told each claim's outcome ({@code forgotten}, {@code left}, {@code unreserved},
   *     {@code conflict}, {@code failed}), for a meter
   */
  public UnansweredSettle(
      RecentWrites recent, ClaimWriter claims, BooleanSupplier mayWrite, Consumer<String> counted) {
    this.recent = recent;
    this.claims = claims;
    this.mayWrite = mayWrite;
    this.counted = counted;
  }

  /** One pass; run at a fixed interval, never two at once. */
  public synchronized void pass() {
    List<RecentWrites.Unanswered> now = recent.unanswered();
    Set<Object> states = new HashSet<>();
    for (RecentWrites.Unanswered u : now) {
      states.add(u.state());
    }
    if (mayWrite.getAsBoolean()) {
      for (RecentWrites.Unanswered u : now) {
        if (seen.contains(u.state()) && recent.isCurrent(u)) {
          settle(u);
        }
      }
    }
    seen = states;
    reported.retainAll(states);
  }

  private void settle(RecentWrites.Unanswered u) {
    String claim = u.namespace() + "/" + u.name();
    try {
      ResourceClaim read = claims.get(u.namespace(), u.name());
      UnansweredDecision.Step step = UnansweredDecision.decide(u, read);
      if (step instanceof UnansweredDecision.Forget f) {
        recent.forgetUnanswered(u);
        counted.accept("forgotten");
        LOG.infof("allocation of claim %s sent without an answer: forgotten, %s", claim, f.why());
      } else if (step instanceof UnansweredDecision.Unreserve r) {
        unreserve(u, r, claim);
      } else if (reported.add(u.state())) {
        counted.accept("left");
        LOG.infof(
            "allocation of claim %s sent without an answer: left to the informer, %s",
            claim, step.why());
      }
    } catch (RuntimeException e) {
      counted.accept("failed");
      LOG.infof(
          "allocation of claim %s sent without an answer: reading or writing the claim failed,"
              + " trying again next pass: %s",
          claim, e.getMessage());
    }
  }

  private void unreserve(RecentWrites.Unanswered u, UnansweredDecision.Unreserve r, String claim) {
    if (!mayWrite.getAsBoolean()) {
      return;
    }
    ResourceClaim stored = claims.unreserveUnanswered(r.read()).orElse(null);
    if (stored == null) {
      // a newer version exists (the lost write, or another writer's), or the claim went: the
      // informer will show it
      reported.add(u.state());
      counted.accept("conflict");
      LOG.infof(
          "allocation of claim %s sent without an answer: its undo met a newer version of the"
              + " claim, which the informer will show and which settles it",
          claim);
      return;
    }
    reported.add(u.state());
    counted.accept("unreserved");
    LOG.infof(
        "allocation of claim %s sent without an answer and never stored (%s): undone, the claim"
            + " is unallocated at version %s and its devices free once the informer shows it",
        claim, r.why(), stored.getMetadata().getResourceVersion());
  }
}
