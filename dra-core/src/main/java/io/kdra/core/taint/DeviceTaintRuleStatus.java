package io.kdra.core.taint;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** {@code DeviceTaintRuleStatus}: conditions, of which {@code EvictionInProgress} is defined. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public class DeviceTaintRuleStatus {

  private List<Condition> conditions = new ArrayList<>();

  public DeviceTaintRuleStatus() {}

  public DeviceTaintRuleStatus(List<Condition> conditions) {
    this.conditions = conditions;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions;
  }
}
