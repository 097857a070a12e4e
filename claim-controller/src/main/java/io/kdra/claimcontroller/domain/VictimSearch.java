package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiPredicate;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;

/**
 * Which pods to preempt for a pod that fits nowhere: kube-scheduler 1.37's DefaultPreemption
 * ({@code defaultpreemption.SelectVictimsOnNode} and {@code preemption.pickOneNodeForPreemption}),
 * with whether the pod fits given as {@link Fits} (the caller simulates it with the node filters
 * and the allocator, the gone pods' claims freed). Per node: every pod of lower priority is
 * removed; if the pod fits then, the removed pods are added back one at a time, most important
 * first (those whose eviction would violate a PodDisruptionBudget before the others), and each that
 * still lets the pod fit is reprieved; the rest are the node's victims. Among the nodes with
 * victims the one with the fewest PDB violations wins, then the lowest highest-priority victim, the
 * lowest sum of priorities, the fewest victims, the latest start of its most important victims,
 * then the first by name. Pure.
 */
public final class VictimSearch {

  /** Upstream's {@code v1.PreemptNever}. */
  public static final String PREEMPT_NEVER = "Never";

  private VictimSearch() {}

  /** Whether {@code pod} fits on {@code node} once the pods {@code gone} are gone from it. */
  @FunctionalInterface
  public interface Fits {
    boolean fits(String node, List<Pod> gone);
  }

  /**
   * The pods evicted together with a pod: itself alone, or every placed member of a PodGroup
   * disrupted whole ({@link PodGroupPolicy#disruptedWhole}), wherever they run.
   */
  @FunctionalInterface
  public interface Units {
    List<Pod> of(Pod pod);

    /** Every pod on its own. */
    Units ALONE = List::of;

    /**
     * A member of a group that {@code whole} names ({@code namespace, name}) with every member of
     * it among {@code placed}; any other pod alone.
     */
    static Units byGroup(List<Pod> placed, BiPredicate<String, String> whole) {
      Map<String, List<Pod>> members = new HashMap<>();
      for (Pod p : placed) {
        PodGroupPolicy.groupOf(p)
            .ifPresent(
                g ->
                    members
                        .computeIfAbsent(
                            groupKey(p.getMetadata().getNamespace(), g), k -> new ArrayList<>())
                        .add(p));
      }
      return pod -> {
        String ns = pod.getMetadata().getNamespace();
        return PodGroupPolicy.groupOf(pod)
            .filter(g -> whole.test(ns, g))
            .map(g -> members.getOrDefault(groupKey(ns, g), List.of(pod)))
            .orElse(List.of(pod));
      };
    }
  }

  static String groupKey(String namespace, String group) {
    return namespace + "/" + group;
  }

  /**
   * A node where preemption lets the pod fit.
   *
   * @param victims the pods to evict, most important first
   * @param pdbViolations how many of them a PodDisruptionBudget would not allow to go
   */
  public record Candidate(String node, List<Pod> victims, int pdbViolations) {}

  /** The pod's priority as admission set it; none counts as 0 (upstream's {@code PodPriority}). */
  public static int priority(Pod pod) {
    Integer p = pod.getSpec() == null ? null : pod.getSpec().getPriority();
    return p == null ? 0 : p;
  }

  /** Whether the pod may preempt others: not with {@code preemptionPolicy: Never}. */
  public static boolean mayPreempt(Pod pod) {
    return pod.getSpec() == null || !PREEMPT_NEVER.equals(pod.getSpec().getPreemptionPolicy());
  }

  /** Upstream's {@code GetPodStartTime}: the start time, else the creation time. */
  static Instant startTime(Pod pod) {
    String t = pod.getStatus() == null ? null : pod.getStatus().getStartTime();
    if (t == null) {
      t = pod.getMetadata().getCreationTimestamp();
    }
    return t == null ? Instant.EPOCH : Instant.parse(t);
  }

  /**
   * Upstream's {@code MoreImportantPod}: higher priority first, then the one that started first.
   */
  static final Comparator<Pod> MORE_IMPORTANT_FIRST = moreImportantFirst(VictimSearch::priority);

  /** As {@link #MORE_IMPORTANT_FIRST}, priorities as {@code victimPriority} reads them. */
  static Comparator<Pod> moreImportantFirst(ToIntFunction<Pod> victimPriority) {
    return Comparator.comparingInt(victimPriority)
        .reversed()
        .thenComparing(VictimSearch::startTime);
  }

  /**
   * The best node to preempt on for {@code preemptor}, among {@code podsByNode} (node name to the
   * pods placed there, in the order the nodes are to be tried: ties go to the first); {@code
   * budgets} are asked for once, and only if some node could take the pod.
   */
  public static Optional<Candidate> search(
      Pod preemptor,
      Map<String, List<Pod>> podsByNode,
      Supplier<List<PodDisruptionBudget>> budgets,
      Fits fits) {
    return search(preemptor, podsByNode, budgets, fits, Units.ALONE);
  }

  /**
   * As above, each pod evicted with its {@code units}: a unit is a victim whole or not at all, its
   * members on other nodes too, and only when every member is of lower priority.
   */
  public static Optional<Candidate> search(
      Pod preemptor,
      Map<String, List<Pod>> podsByNode,
      Supplier<List<PodDisruptionBudget>> budgets,
      Fits fits,
      Units units) {
    return search(preemptor, podsByNode, budgets, fits, units, VictimSearch::priority);
  }

  /**
   * As above, each pod weighed as a victim by {@code victimPriority} (upstream's {@code
   * GetPodPriority}: a PodGroup member's group's priority): whether it is of lower priority than
   * the preemptor, and which victims are reprieved first. The node is still chosen by the victims'
   * own priorities, as upstream's {@code pickOneNodeForPreemption} reads them.
   */
  public static Optional<Candidate> search(
      Pod preemptor,
      Map<String, List<Pod>> podsByNode,
      Supplier<List<PodDisruptionBudget>> budgets,
      Fits fits,
      Units units,
      ToIntFunction<Pod> victimPriority) {
    List<PodDisruptionBudget>[] read = new List[1];
    Supplier<List<PodDisruptionBudget>> once =
        () -> read[0] != null ? read[0] : (read[0] = budgets.get());
    List<Candidate> candidates = new ArrayList<>();
    podsByNode.forEach(
        (node, pods) ->
            onNode(preemptor, node, pods, once, fits, units, victimPriority)
                .ifPresent(candidates::add));
    return pick(candidates);
  }

  /**
   * The fewest victims on {@code node} whose eviction lets {@code preemptor} fit; empty when even
   * evicting every pod of lower priority would not (or there is none). Pods already being deleted
   * are no victims: what they hold counts until they are gone.
   */
  public static Optional<Candidate> onNode(
      Pod preemptor,
      String node,
      List<Pod> pods,
      Supplier<List<PodDisruptionBudget>> budgets,
      Fits fits) {
    return onNode(preemptor, node, pods, budgets, fits, Units.ALONE);
  }

  /**
   * As above, each pod of {@code node} evicted with its unit ({@link Units}); a unit with a member
   * of no lower priority is no victim, and its members already being deleted are left out of it.
   */
  public static Optional<Candidate> onNode(
      Pod preemptor,
      String node,
      List<Pod> pods,
      Supplier<List<PodDisruptionBudget>> budgets,
      Fits fits,
      Units units) {
    return onNode(preemptor, node, pods, budgets, fits, units, VictimSearch::priority);
  }

  /** As above, each pod weighed as a victim by {@code victimPriority} (see {@link #search}). */
  public static Optional<Candidate> onNode(
      Pod preemptor,
      String node,
      List<Pod> pods,
      Supplier<List<PodDisruptionBudget>> budgets,
      Fits fits,
      Units units,
      ToIntFunction<Pod> victimPriority) {
    int priority = priority(preemptor);
    Comparator<Pod> moreImportantFirst = moreImportantFirst(victimPriority);
    Map<String, List<Pod>> byKey = new LinkedHashMap<>();
    for (Pod p : pods) {
      if (victimPriority.applyAsInt(p) >= priority
          || p.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      List<Pod> unit = units.of(p);
      if (unit.stream().anyMatch(m -> victimPriority.applyAsInt(m) >= priority)) {
        continue;
      }
      List<Pod> going =
          unit.stream()
              .filter(m -> m.getMetadata().getDeletionTimestamp() == null)
              .sorted(moreImportantFirst)
              .toList();
      byKey.putIfAbsent(going.get(0).getMetadata().getUid(), going);
    }
    List<List<Pod>> potential =
        byKey.values().stream()
            .sorted(Comparator.comparing((List<Pod> u) -> u.get(0), moreImportantFirst))
            .toList();
    if (potential.isEmpty() || !fits.fits(node, flat(potential))) {
      return Optional.empty();
    }
    List<List<Pod>> violating = new ArrayList<>();
    List<List<Pod>> nonViolating = new ArrayList<>();
    splitUnitsByBudget(potential, budgets.get(), violating, nonViolating);
    List<List<Pod>> gone = new ArrayList<>(potential);
    List<Pod> victims = new ArrayList<>();
    int violations = 0;
    for (List<Pod> u : violating) {
      if (!reprieved(u, node, gone, victims, fits)) {
        violations++;
      }
    }
    for (List<Pod> u : nonViolating) {
      reprieved(u, node, gone, victims, fits);
    }
    if (victims.isEmpty()) {
      return Optional.empty(); // it fits without preemption now: the next attempt places it
    }
    victims.sort(moreImportantFirst);
    return Optional.of(new Candidate(node, List.copyOf(victims), violations));
  }

  private static List<Pod> flat(List<List<Pod>> units) {
    return units.stream().flatMap(List::stream).toList();
  }

  /** Adds unit {@code u} back; keeps it if the pod still fits, else its pods are victims. */
  private static boolean reprieved(
      List<Pod> u, String node, List<List<Pod>> gone, List<Pod> victims, Fits fits) {
    gone.remove(u);
    if (fits.fits(node, flat(gone))) {
      return true;
    }
    gone.add(u);
    victims.addAll(u);
    return false;
  }

  /** {@link #splitByBudget} by units: a unit violates when one of its pods does. */
  static void splitUnitsByBudget(
      List<List<Pod>> units,
      List<PodDisruptionBudget> budgets,
      List<List<Pod>> violating,
      List<List<Pod>> nonViolating) {
    int[] allowed = allowed(budgets);
    for (List<Pod> u : units) {
      boolean any = false;
      for (Pod p : u) {
        any |= violates(p, budgets, allowed);
      }
      (any ? violating : nonViolating).add(u);
    }
  }

  private static int[] allowed(List<PodDisruptionBudget> budgets) {
    int[] allowed = new int[budgets.size()];
    for (int i = 0; i < budgets.size(); i++) {
      PodDisruptionBudget b = budgets.get(i);
      Integer a = b.getStatus() == null ? null : b.getStatus().getDisruptionsAllowed();
      allowed[i] = a == null ? 0 : a;
    }
    return allowed;
  }

  /**
   * Upstream's {@code FilterVictimsWithPDBViolation}: in order, each pod matched by a budget uses
   * one of its allowed disruptions (unless the budget already counts it as disrupted); a pod for
   * which some budget has none left would violate it.
   */
  static void splitByBudget(
      List<Pod> pods,
      List<PodDisruptionBudget> budgets,
      List<Pod> violating,
      List<Pod> nonViolating) {
    int[] allowed = allowed(budgets);
    for (Pod pod : pods) {
      (violates(pod, budgets, allowed) ? violating : nonViolating).add(pod);
    }
  }

  private static boolean violates(Pod pod, List<PodDisruptionBudget> budgets, int[] allowed) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    if (labels == null || labels.isEmpty()) {
      return false;
    }
    for (int i = 0; i < budgets.size(); i++) {
      PodDisruptionBudget b = budgets.get(i);
      if (!pod.getMetadata().getNamespace().equals(b.getMetadata().getNamespace())) {
        continue;
      }
      LabelSelectors.Selector selector =
          LabelSelectors.of(b.getSpec() == null ? null : b.getSpec().getSelector());
      // a budget with no or an empty selector matches nothing
      if (selector.isEmpty() || !selector.matches(labels)) {
        continue;
      }
      if (b.getStatus() != null
          && b.getStatus().getDisruptedPods() != null
          && b.getStatus().getDisruptedPods().containsKey(pod.getMetadata().getName())) {
        continue;
      }
      allowed[i]--;
      if (allowed[i] < 0) {
        return true;
      }
    }
    return false;
  }

  /** Upstream's {@code pickOneNodeForPreemption} with its default score functions, in order. */
  public static Optional<Candidate> pick(List<Candidate> candidates) {
    List<ToLongFunction<Candidate>> scores =
        List.of(
            c -> -c.pdbViolations(),
            c -> -priority(c.victims().get(0)),
            c ->
                -c.victims().stream()
                    .mapToLong(p -> (long) priority(p) + Integer.MAX_VALUE + 1L)
                    .sum(),
            c -> -c.victims().size(),
            c -> earliestStartOfMostImportant(c.victims()).toEpochMilli());
    List<Candidate> left = candidates;
    for (ToLongFunction<Candidate> score : scores) {
      if (left.size() <= 1) {
        break;
      }
      long max = left.stream().mapToLong(score).max().orElseThrow();
      left = left.stream().filter(c -> score.applyAsLong(c) == max).toList();
    }
    return left.isEmpty() ? Optional.empty() : Optional.of(left.get(0));
  }

  /** Upstream's {@code GetEarliestPodStartTime}: among the highest-priority victims. */
  static Instant earliestStartOfMostImportant(List<Pod> victims) {
    int top = victims.stream().mapToInt(VictimSearch::priority).max().orElse(0);
    return victims.stream()
        .filter(p -> priority(p) == top)
        .map(VictimSearch::startTime)
        .min(Comparator.naturalOrder())
        .orElse(Instant.EPOCH);
  }
}
