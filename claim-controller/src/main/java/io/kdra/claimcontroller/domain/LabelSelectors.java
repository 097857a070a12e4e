package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * apimachinery's {@code metav1.LabelSelectorAsSelector} and {@code labels.Selector}: a null
 * selector matches nothing, an empty one everything ({@link Selector#isEmpty}); {@code matchLabels}
 * and {@code In}/{@code NotIn}/{@code Exists}/{@code DoesNotExist} expressions are ANDed. An
 * unknown operator (the API server rejects it) matches nothing. Pure.
 */
public final class LabelSelectors {

  private LabelSelectors() {}

  /** One requirement: a key, an operator and its values. */
  private record Requirement(String key, String op, Set<String> values) {
    boolean matches(Map<String, String> labels) {
      String have = labels == null ? null : labels.get(key);
      return switch (op) {
        case "In" -> have != null && values.contains(have);
        case "NotIn" -> have == null || !values.contains(have);
        case "Exists" -> have != null;
        case "DoesNotExist" -> have == null;
        default -> false;
      };
    }
  }

  /** A compiled selector. */
  public static final class Selector {
    static final Selector NOTHING = new Selector(null);
    static final Selector EVERYTHING = new Selector(List.of());

    /** Null: matches nothing. */
    private final List<Requirement> requirements;

    private Selector(List<Requirement> requirements) {
      this.requirements = requirements;
    }

    public boolean matches(Map<String, String> labels) {
      if (requirements == null) {
        return false;
      }
      for (Requirement r : requirements) {
        if (!r.matches(labels)) {
          return false;
        }
      }
      return true;
    }

    /** Upstream's {@code Empty()}: no requirement, so it matches everything. */
    public boolean isEmpty() {
      return requirements != null && requirements.isEmpty();
    }

    /**
     * This selector with {@code key = value} added for each entry (upstream's {@code
     * mergeLabelSetWithSelector}); nothing stays nothing.
     */
    public Selector and(Map<String, String> equal) {
      if (requirements == null || equal.isEmpty()) {
        return this;
      }
      List<Requirement> all = new ArrayList<>(requirements);
      equal.forEach((k, v) -> all.add(new Requirement(k, "In", Set.of(v))));
      return new Selector(List.copyOf(all));
    }
  }

  /** The selector {@code s} stands for. */
  public static Selector of(LabelSelector s) {
    if (s == null) {
      return Selector.NOTHING;
    }
    List<Requirement> rs = new ArrayList<>();
    if (s.getMatchLabels() != null) {
      s.getMatchLabels().forEach((k, v) -> rs.add(new Requirement(k, "In", Set.of(v))));
    }
    if (s.getMatchExpressions() != null) {
      for (LabelSelectorRequirement e : s.getMatchExpressions()) {
        rs.add(
            new Requirement(
                e.getKey(),
                e.getOperator() == null ? "" : e.getOperator(),
                e.getValues() == null ? Set.of() : Set.copyOf(e.getValues())));
      }
    }
    return rs.isEmpty() ? Selector.EVERYTHING : new Selector(List.copyOf(rs));
  }
}
