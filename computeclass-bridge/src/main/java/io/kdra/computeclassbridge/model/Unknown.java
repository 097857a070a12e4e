package io.kdra.computeclassbridge.model;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Base of the model's nested types: keeps the fields the bridge does not model, in their JSON form,
 * so that serialising an object read from the API server writes them back unchanged.
 */
public abstract class Unknown {

  private final Map<String, Object> additional = new LinkedHashMap<>();

  /** The fields this model does not name, in document order. */
  @JsonAnyGetter
  public Map<String, Object> getAdditional() {
    return additional;
  }

  @JsonAnySetter
  public void setAdditional(String name, Object value) {
    additional.put(name, value);
  }

  @Override
  public boolean equals(Object o) {
    return o != null && o.getClass() == getClass() && additional.equals(((Unknown) o).additional);
  }

  @Override
  public int hashCode() {
    return Objects.hash(getClass(), additional);
  }
}
