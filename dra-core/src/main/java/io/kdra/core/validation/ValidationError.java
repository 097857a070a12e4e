package io.kdra.core.validation;

import io.kdra.core.cel.golang.GoQuote;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * One problem found in an object, shaped like an entry of Kubernetes' {@code field.ErrorList} so
 * that messages read the same as the API server's.
 *
 * <p>{@link #toString()} is one line: {@code <kind> [<namespace>/]<name>: <field>: <message>}, for
 * example {@code ResourceSlice node-a-gpu: spec.devices: Too many: 130: must have at most 128
 * items}.
 *
 * @param object the object the problem is in
 * @param field the Kubernetes-style field path, e.g. {@code spec.devices[3].attributes["a/b"]}
 * @param type what kind of problem it is
 * @param value the offending value, where the message shows one
 * @param detail the explanation; may be empty
 */
public record ValidationError(
    ObjectRef object, String field, Type type, Optional<Object> value, String detail) {

  /** The error kinds of {@code field.ErrorType} that validation here produces. */
  public enum Type {
    REQUIRED("Required value"),
    INVALID("Invalid value"),
    DUPLICATE("Duplicate value"),
    NOT_SUPPORTED("Unsupported value"),
    TOO_MANY("Too many"),
    TOO_LONG("Too long"),
    FORBIDDEN("Forbidden");

    private final String text;

    Type(String text) {
      this.text = text;
    }

    /** The text Kubernetes prints for this type. */
    public String text() {
      return text;
    }
  }

  /**
   * The object a problem is in.
   *
   * @param kind e.g. {@code ResourceSlice}
   * @param namespace empty for cluster-scoped objects
   * @param name the object's name; may be empty for objects not yet named
   */
  public record ObjectRef(String kind, String namespace, String name) {
    public ObjectRef {
      Objects.requireNonNull(kind, "kind");
      namespace = namespace == null ? "" : namespace;
      name = name == null ? "" : name;
    }

    @Override
    public String toString() {
      return kind + " " + (namespace.isEmpty() ? name : namespace + "/" + name);
    }
  }

  public ValidationError {
    Objects.requireNonNull(object, "object");
    Objects.requireNonNull(field, "field");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(value, "value");
    detail = detail == null ? "" : detail;
  }

  /**
   * The message without the field, as {@code field.Error.ErrorBody()} formats it: the type, the
   * value (except for types that never show one), then the detail.
   */
  public String message() {
    StringBuilder sb = new StringBuilder(type.text());
    boolean showsValue = type != Type.REQUIRED && type != Type.FORBIDDEN && type != Type.TOO_LONG;
    if (showsValue && value.isPresent()) {
      sb.append(": ").append(render(value.get()));
    }
    if (!detail.isEmpty()) {
      sb.append(": ").append(detail);
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return object + ": " + field + ": " + message();
  }

  /** Values print as Go's {@code %q} for strings and {@code %v} otherwise. */
  static String render(Object value) {
    if (value instanceof String s) {
      return quote(s);
    }
    if (value instanceof List<?> list) {
      return list.stream().map(ValidationError::render).collect(Collectors.joining(", ", "[", "]"));
    }
    return String.valueOf(value);
  }

  /** Go's {@code %q}, as the API server prints a string value. */
  static String quote(String s) {
    return GoQuote.string(s);
  }
}
