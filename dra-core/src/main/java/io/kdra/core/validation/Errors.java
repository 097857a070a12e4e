package io.kdra.core.validation;

import io.kdra.core.validation.ValidationError.ObjectRef;
import io.kdra.core.validation.ValidationError.Type;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/** Collects the errors of one object, with constructors named after {@code field.*}. */
final class Errors {

  private final ObjectRef object;
  private final List<ValidationError> errors = new ArrayList<>();

  Errors(ObjectRef object) {
    this.object = object;
  }

  List<ValidationError> list() {
    return List.copyOf(errors);
  }

  private void add(FieldPath path, Type type, Object value, String detail) {
    errors.add(
        new ValidationError(object, path.toString(), type, Optional.ofNullable(value), detail));
  }

  void required(FieldPath path, String detail) {
    add(path, Type.REQUIRED, null, detail);
  }

  /** A null value is left out of the message. */
  void invalid(FieldPath path, Object value, String detail) {
    add(path, Type.INVALID, value, detail);
  }

  /** One {@link #invalid} per message, as upstream reports each format problem. */
  void invalid(FieldPath path, Object value, Collection<String> messages) {
    messages.forEach(m -> invalid(path, value, m));
  }

  void duplicate(FieldPath path, Object value) {
    add(path, Type.DUPLICATE, value, "");
  }

  void notSupported(FieldPath path, Object value, List<String> supported) {
    add(
        path,
        Type.NOT_SUPPORTED,
        value,
        "supported values: "
            + supported.stream().map(ValidationError::quote).collect(Collectors.joining(", ")));
  }

  void tooMany(FieldPath path, int actual, int max) {
    add(path, Type.TOO_MANY, actual, "must have at most " + max + " items");
  }

  void tooLong(FieldPath path, int max) {
    add(path, Type.TOO_LONG, null, "may not be more than " + max + " bytes");
  }

  void forbidden(FieldPath path, String detail) {
    add(path, Type.FORBIDDEN, null, detail);
  }

  /**
   * Reports "Too many" and returns false when the list is longer than {@code max}; callers then
   * skip the items, as upstream does to bound the work on oversized input.
   */
  boolean withinLimit(FieldPath path, Collection<?> items, int max) {
    if (items.size() > max) {
      tooMany(path, items.size(), max);
      return false;
    }
    return true;
  }

  /** Reports every item whose key was already seen, at the item's index. */
  <T, K> void unique(FieldPath path, List<T> items, Function<T, K> key) {
    Set<K> seen = new HashSet<>();
    for (int i = 0; i < items.size(); i++) {
      K k = key.apply(items.get(i));
      if (!seen.add(k)) {
        duplicate(path.index(i), k);
      }
    }
  }
}
