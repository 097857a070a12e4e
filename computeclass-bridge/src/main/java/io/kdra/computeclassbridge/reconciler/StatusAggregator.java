package io.kdra.computeclassbridge.reconciler;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.kdra.computeclassbridge.mapping.Alternative;
import io.kdra.computeclassbridge.mapping.Mapping;
import io.kdra.computeclassbridge.mapping.PriorityNote;
import io.kdra.computeclassbridge.model.ComputeClassStatus;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Builds the bridge's two conditions from what the mapping and the applier found. Pure: the clock
 * comes in as a parameter, and a condition whose status did not change keeps its {@code
 * lastTransitionTime}, so recomputing an unchanged situation yields an equal status and the
 * reconciler writes nothing. Conditions of other types (GKE writes its own) are kept as they are.
 *
 * <ul>
 *   <li>{@code Ready}: True when templates with at least one alternative are in place.
 *   <li>{@code Degraded}: True when a priority names an accelerator the bridge cannot map, an
 *       object name is taken by something the bridge did not generate, or the catalog override is
 *       invalid; the message names each priority or object.
 * </ul>
 */
public final class StatusAggregator {

  public static final String READY = "Ready";
  public static final String DEGRADED = "Degraded";

  private StatusAggregator() {}

  /**
   * @param old the current status, possibly null
   * @param generation {@code metadata.generation} the conditions describe
   * @param templateName name of the generated templates
   * @param namespaces how many namespaces got a template
   * @param conflicts from the applier
   * @param catalogProblem why the catalog override was ignored, if it was
   */
  public static ComputeClassStatus aggregate(
      ComputeClassStatus old,
      long generation,
      Mapping mapping,
      String templateName,
      int namespaces,
      List<String> conflicts,
      Optional<String> catalogProblem,
      Instant now) {
    List<Condition> previous = old == null ? List.of() : old.getConditions();
    Condition ready = ready(mapping, templateName, namespaces);
    Condition degraded = degraded(mapping, conflicts, catalogProblem);
    List<Condition> conditions = new ArrayList<>();
    for (Condition c : previous) {
      if (!READY.equals(c.getType()) && !DEGRADED.equals(c.getType())) {
        conditions.add(c);
      }
    }
    conditions.add(carryTransition(ready, find(previous, READY), generation, now));
    conditions.add(carryTransition(degraded, find(previous, DEGRADED), generation, now));
    ComputeClassStatus status = new ComputeClassStatus();
    if (old != null) {
      old.getAdditional().forEach(status::setAdditional);
    }
    status.setConditions(conditions);
    return status;
  }

  private static Condition ready(Mapping m, String templateName, int namespaces) {
    String skipped = m.skipped().isEmpty() ? "" : "; skipped " + notes(m.skipped());
    if (m.alternatives().isEmpty()) {
      return condition(
          READY,
          "False",
          "NoAcceleratorPriorities",
          "no priority names a gpu or tpu the bridge can map, so no ResourceClaimTemplate"
              + skipped);
    }
    String order =
        m.alternatives().stream().map(Alternative::describe).collect(Collectors.joining(", "));
    if (namespaces == 0) {
      return condition(
          READY,
          "False",
          "NoNamespaceSelected",
          "DeviceClasses are in place, but"
              + " no namespace is selected for ResourceClaimTemplate "
              + templateName
              + skipped);
    }
    return condition(
        READY,
        "True",
        "TemplatesGenerated",
        "ResourceClaimTemplate "
            + templateName
            + " in "
            + namespaces
            + (namespaces == 1 ? " namespace" : " namespaces")
            + " tries, in order: "
            + order
            + skipped);
  }

  private static Condition degraded(
      Mapping m, List<String> conflicts, Optional<String> catalogProblem) {
    List<String> messages = new ArrayList<>();
    catalogProblem.ifPresent(p -> messages.add("catalog override ignored: " + p));
    m.problems().stream().map(PriorityNote::message).forEach(messages::add);
    messages.addAll(conflicts);
    if (messages.isEmpty()) {
      return condition(
          DEGRADED,
          "False",
          "AllPrioritiesMapped",
          "every priority naming a gpu or tpu is an alternative of the template");
    }
    String reason =
        catalogProblem.isPresent()
            ? "CatalogInvalid"
            : !m.problems().isEmpty() ? "PrioritiesNotMapped" : "NameConflict";
    return condition(DEGRADED, "True", reason, String.join("; ", messages));
  }

  private static String notes(List<PriorityNote> notes) {
    return notes.stream().map(PriorityNote::message).collect(Collectors.joining("; "));
  }

  private static Condition condition(String type, String status, String reason, String message) {
    return new ConditionBuilder()
        .withType(type)
        .withStatus(status)
        .withReason(reason)
        .withMessage(message)
        .build();
  }

  private static Condition carryTransition(
      Condition c, Condition previous, long generation, Instant now) {
    boolean same =
        previous != null
            && Objects.equals(previous.getStatus(), c.getStatus())
            && previous.getLastTransitionTime() != null;
    return new ConditionBuilder(c)
        .withObservedGeneration(generation)
        .withLastTransitionTime(
            same
                ? previous.getLastTransitionTime()
                : now.truncatedTo(ChronoUnit.SECONDS).toString())
        .build();
  }

  private static Condition find(List<Condition> conditions, String type) {
    return conditions.stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
  }
}
