package io.kdra.computeclassbridge.reconciler;

import io.fabric8.kubernetes.api.model.Namespace;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which namespaces get the templates: those named in a list, plus those whose labels match a
 * Kubernetes label selector ({@code a=b}, {@code a!=b}, {@code a}, {@code !a}, {@code a in (x,y)},
 * {@code a notin (x,y)}, comma-separated). Only namespaces that exist and are not being deleted
 * count, so a template never lands in a namespace that is going away. Pure and thread-safe.
 */
public final class NamespaceSelection {

  private static final Pattern SET = Pattern.compile("^([^\\s!=]+)\\s+(in|notin)\\s+\\((.*)\\)$");
  private static final Pattern EQUALITY = Pattern.compile("^([^\\s!=]+)\\s*(==|=|!=)\\s*(\\S*)$");

  private final Set<String> names;
  private final Optional<Predicate<Map<String, String>>> selector;

  /**
   * @throws IllegalArgumentException when the selector cannot be parsed
   */
  public NamespaceSelection(Collection<String> names, Optional<String> selector) {
    this.names = Set.copyOf(names);
    this.selector = selector.filter(s -> !s.isBlank()).map(NamespaceSelection::parse);
  }

  /** The selected namespace names, sorted. */
  public SortedSet<String> select(Collection<Namespace> namespaces) {
    SortedSet<String> selected = new TreeSet<>();
    for (Namespace ns : namespaces) {
      if (ns.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      String name = ns.getMetadata().getName();
      Map<String, String> labels =
          ns.getMetadata().getLabels() == null ? Map.of() : ns.getMetadata().getLabels();
      if (names.contains(name) || selector.map(s -> s.test(labels)).orElse(false)) {
        selected.add(name);
      }
    }
    return selected;
  }

  static Predicate<Map<String, String>> parse(String selector) {
    Predicate<Map<String, String>> all = labels -> true;
    for (String requirement : split(selector)) {
      all = all.and(requirement(requirement.trim(), selector));
    }
    return all;
  }

  private static Predicate<Map<String, String>> requirement(String r, String selector) {
    Matcher set = SET.matcher(r);
    if (set.matches()) {
      String key = set.group(1);
      Set<String> values =
          Set.copyOf(Arrays.stream(set.group(3).split(",")).map(String::trim).toList());
      return "in".equals(set.group(2))
          ? labels -> labels.containsKey(key) && values.contains(labels.get(key))
          : labels -> !labels.containsKey(key) || !values.contains(labels.get(key));
    }
    Matcher eq = EQUALITY.matcher(r);
    if (eq.matches()) {
      String key = eq.group(1);
      String value = eq.group(3);
      return "!=".equals(eq.group(2))
          ? labels -> !value.equals(labels.get(key))
          : labels -> value.equals(labels.get(key));
    }
    if (r.startsWith("!") && r.length() > 1 && !r.substring(1).isBlank()) {
      String key = r.substring(1).trim();
      return labels -> !labels.containsKey(key);
    }
    if (!r.isEmpty() && r.chars().noneMatch(c -> " =!(),".indexOf(c) >= 0)) {
      return labels -> labels.containsKey(r);
    }
    throw new IllegalArgumentException(
        "kdra.computeclass-bridge.namespaces.selector: cannot parse \""
            + r
            + "\" in \""
            + selector
            + "\"");
  }

  /** Splits on commas outside parentheses. */
  private static List<String> split(String selector) {
    List<String> parts = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < selector.length(); i++) {
      char c = selector.charAt(i);
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      } else if (c == ',' && depth == 0) {
        parts.add(selector.substring(start, i));
        start = i + 1;
      }
    }
    parts.add(selector.substring(start));
    return parts;
  }
}
