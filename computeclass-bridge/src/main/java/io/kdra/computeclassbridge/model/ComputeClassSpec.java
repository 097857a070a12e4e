package io.kdra.computeclassbridge.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** {@code spec}: the ordered fallback list; everything else is carried through unread. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ComputeClassSpec extends Unknown {

  private List<Priority> priorities = new ArrayList<>();

  /** Tried top to bottom; never null. */
  public List<Priority> getPriorities() {
    return priorities;
  }

  public void setPriorities(List<Priority> priorities) {
    this.priorities = priorities == null ? new ArrayList<>() : priorities;
  }

  @Override
  public boolean equals(Object o) {
    return super.equals(o) && priorities.equals(((ComputeClassSpec) o).priorities);
  }

  @Override
  public int hashCode() {
    return Objects.hash(super.hashCode(), priorities);
  }
}
