package io.kdra.slicepublisher.domain;

import io.kdra.core.validation.ValidationError;
import java.util.List;

/**
 * A planned slice that is not written because the API server would refuse it.
 *
 * @param name the slice's name
 * @param errors what the API server would object to, never empty
 */
public record RefusedSlice(String name, List<ValidationError> errors) {
  public RefusedSlice {
    errors = List.copyOf(errors);
    if (errors.isEmpty()) {
      throw new IllegalArgumentException("a refused slice has errors: " + name);
    }
  }
}
