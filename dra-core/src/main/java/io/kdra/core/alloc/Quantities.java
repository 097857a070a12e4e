package io.kdra.core.alloc;

import io.kdra.core.model.Quantity;

/** Conversions between fabric8's textual quantities and the exact {@link Quantity}. */
final class Quantities {

  private Quantities() {}

  /** Parses a fabric8 quantity; null stays null. */
  static Quantity of(io.fabric8.kubernetes.api.model.Quantity q) {
    return Quantity.fromApi(q);
  }

  /** The canonical API form. */
  static io.fabric8.kubernetes.api.model.Quantity toApi(Quantity q) {
    return new io.fabric8.kubernetes.api.model.Quantity(q.toString());
  }
}
