package io.kdra.computeclassbridge.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * {@code status}. On GKE the class's own controller writes conditions here too, so the bridge only
 * ever replaces the condition types it owns and keeps every other entry and field.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ComputeClassStatus extends Unknown {

  private List<Condition> conditions = new ArrayList<>();

  /** Never null. */
  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions == null ? new ArrayList<>() : conditions;
  }

  @Override
  public boolean equals(Object o) {
    return super.equals(o) && conditions.equals(((ComputeClassStatus) o).conditions);
  }

  @Override
  public int hashCode() {
    return Objects.hash(super.hashCode(), conditions);
  }
}
