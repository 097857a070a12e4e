package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.kdra.claimcontroller.domain.GroupPreemption;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.k8s.PodGroups;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;

/**
 * Per preemptor's UID, the PodGroups ({@code namespace/name}) whose every placed member it evicted
 * ({@link Preemption}): their claims are freed for it once the members are gone. Held in memory and
 * recorded on each group ({@link GroupPreemption}), from which a nominated preemptor's are read
 * back after a restart or a change of leader; memory covers the informer's lag behind the record.
 * Once the group is placed again the record is set back ({@link #placedAgain}).
 */
final class EmptiedGroups {

  private static final Logger LOG = Logger.getLogger(EmptiedGroups.class);

  private final ClusterView view;
  private final Map<String, Set<String>> byPreemptor = new ConcurrentHashMap<>();

  EmptiedGroups(ClusterView view) {
    this.view = view;
  }

  /**
   * The groups preemptor {@code uid} emptied: remembered, and, once it is {@code nominated}, those
   * recorded on the groups that hold a claim alone (the only ones that matter), read from {@code
   * groups}.
   */
  Set<String> of(String uid, boolean nominated, PodGroups groups) {
    Set<String> remembered = byPreemptor.getOrDefault(uid, Set.of());
    if (!nominated) {
      return remembered;
    }
    Set<String> all = new HashSet<>(remembered);
    for (ResourceClaim c : view.claims()) {
      Optional<String> group = soleGroup(c);
      String ns = c.getMetadata().getNamespace();
      if (group.isPresent()
          && groups
              .get(ns, group.get())
              .map(PodGroupPolicy::preemptor)
              .filter(uid::equals)
              .isPresent()) {
        all.add(ns + "/" + group.get());
      }
    }
    return Set.copyOf(all);
  }

  /**
   * Remembers that preemptor {@code uid}, nominated to {@code node}, empties {@code going}, and
   * records it on each group in {@code groups}; a record that fails leaves memory alone, as before.
   */
  void add(String uid, Set<String> going, String node, PodGroups groups) {
    if (going.isEmpty()) {
      return;
    }
    byPreemptor.merge(uid, going, EmptiedGroups::union);
    for (String key : going) {
      int slash = key.indexOf('/');
      try {
        groups.recordPreemption(key.substring(0, slash), key.substring(slash + 1), uid, node);
      } catch (RuntimeException e) {
        LOG.warnf(
            "cannot record on PodGroup %s that it is preempted (%s): its claim is freed for the"
                + " preemptor only while this process runs",
            key, e.toString());
      }
    }
  }

  /**
   * {@code member} of a PodGroup is bound: once every member of its group is ({@link
   * GroupPreemption#placedAgain}), the group's record of the preemption that emptied it is set back
   * to False, and forgotten here, unless its preemptor still waits for it ({@link #waiting});
   * nothing while the group has no such record (the usual case: one read of the informer's cache).
   * A record that fails stays, with a warning.
   */
  void placedAgain(Pod member, PodGroups groups) {
    Optional<String> name = PodGroupPolicy.groupOf(member);
    if (name.isEmpty()) {
      return;
    }
    String ns = member.getMetadata().getNamespace();
    Optional<PodGroupPolicy> group = groups.get(ns, name.get());
    if (group.isEmpty() || group.get().preemptor() == null) {
      return;
    }
    String scheduler = member.getSpec().getSchedulerName();
    List<Pod> members =
        view.pods().stream()
            .filter(p -> ns.equals(p.getMetadata().getNamespace()))
            .filter(p -> name.equals(PodGroupPolicy.groupOf(p)))
            .filter(p -> Pods.isScheduledBy(p, scheduler) && !Pods.isTerminal(p))
            .toList();
    String preemptor = group.get().preemptor();
    if (!GroupPreemption.placedAgain(members, group.get().minCount()) || waiting(preemptor)) {
      return;
    }
    String key = ns + "/" + name.get();
    byPreemptor.computeIfPresent(
        preemptor,
        (uid, going) -> {
          Set<String> left = new HashSet<>(going);
          left.remove(key);
          return left.isEmpty() ? null : Set.copyOf(left);
        });
    try {
      groups.recordPlacedAgain(ns, name.get(), preemptor, members.size());
    } catch (RuntimeException e) {
      LOG.warnf(
          "cannot record on PodGroup %s that it is placed again (%s): its DisruptionTarget"
              + " condition still names preemptor %s",
          key, e.toString(), preemptor);
    }
  }

  /**
   * Whether the preemptor with {@code uid} still waits for what it evicted (pending, nominated):
   * then the record stays, since it frees the group's claim for it after a restart, however the
   * group looks meanwhile (its members evicted still look placed until their deletion).
   */
  private boolean waiting(String uid) {
    return view.pods().stream()
        .filter(p -> uid.equals(p.getMetadata().getUid()))
        .anyMatch(
            p ->
                !Pods.isBound(p)
                    && !Pods.isDone(p)
                    && p.getMetadata().getDeletionTimestamp() == null
                    && p.getStatus() != null
                    && p.getStatus().getNominatedNodeName() != null
                    && !p.getStatus().getNominatedNodeName().isEmpty());
  }

  void forget(String uid) {
    byPreemptor.remove(uid);
  }

  /**
   * Frees the claims reserved for the groups a preemptor emptied ({@code emptied}) alone, once no
   * member of them is placed: nobody else would while the groups exist.
   */
  void release(
      Set<String> emptied,
      List<Pod> placed,
      Preemption.GroupClaimRelease release,
      BooleanSupplier mayWrite) {
    if (emptied.isEmpty() || leaving(emptied, placed)) {
      return;
    }
    for (ResourceClaim c : view.claims()) {
      Optional<String> group = soleGroup(c);
      if (group.isPresent()
          && emptied.contains(c.getMetadata().getNamespace() + "/" + group.get())
          && mayWrite.getAsBoolean()) {
        release.release(c, group.get());
      }
    }
  }

  /**
   * The PodGroups ({@code namespace/name}) every placed member of which is among {@code victims}.
   */
  static Set<String> by(List<Pod> victims, List<Pod> placed) {
    Set<String> going =
        victims.stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());
    Map<String, Set<String>> members = PreemptionFits.groupMembers(placed);
    return PreemptionFits.groupMembers(victims).keySet().stream()
        .filter(key -> going.containsAll(members.getOrDefault(key, Set.of())))
        .collect(Collectors.toUnmodifiableSet());
  }

  /**
   * Whether a member of a group this preemptor emptied is still terminating. New pods of the group
   * placed since are not waited for: they hold the group's claim again and are victims anew.
   */
  static boolean leaving(Set<String> emptied, List<Pod> placed) {
    if (emptied.isEmpty()) {
      return false;
    }
    return PreemptionFits.groupMembers(
            placed.stream().filter(p -> p.getMetadata().getDeletionTimestamp() != null).toList())
        .keySet()
        .stream()
        .anyMatch(emptied::contains);
  }

  /** The PodGroup an allocated claim is reserved for, when it is reserved for that alone. */
  private static Optional<String> soleGroup(ResourceClaim c) {
    if (c.getStatus() == null
        || c.getStatus().getAllocation() == null
        || c.getStatus().getReservedFor() == null
        || c.getStatus().getReservedFor().size() != 1) {
      return Optional.empty();
    }
    ResourceClaimConsumerReference r = c.getStatus().getReservedFor().get(0);
    return PodGroupClaims.isPodGroup(r) ? Optional.of(r.getName()) : Optional.empty();
  }

  private static Set<String> union(Set<String> a, Set<String> b) {
    Set<String> u = new HashSet<>(a);
    u.addAll(b);
    return Set.copyOf(u);
  }
}
