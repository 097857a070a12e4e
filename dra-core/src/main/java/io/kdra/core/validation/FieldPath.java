package io.kdra.core.validation;

/**
 * An immutable field path that prints like Kubernetes' {@code field.Path}: children joined by dots,
 * list indexes in brackets. Map keys are printed quoted ({@code attributes["a/b"]}) because
 * qualified names contain dots and slashes; upstream prints them bare.
 */
public final class FieldPath {

  private final String text;

  private FieldPath(String text) {
    this.text = text;
  }

  /** A root path of one or more names, e.g. {@code root("spec", "devices")}. */
  public static FieldPath root(String name, String... more) {
    return new FieldPath(name).child(more);
  }

  /** This path extended by field names. */
  public FieldPath child(String... names) {
    StringBuilder sb = new StringBuilder(text);
    for (String name : names) {
      sb.append('.').append(name);
    }
    return new FieldPath(sb.toString());
  }

  /** The list element at {@code index}. */
  public FieldPath index(int index) {
    return new FieldPath(text + "[" + index + "]");
  }

  /** The map entry with {@code key}. */
  public FieldPath key(String key) {
    return new FieldPath(text + "[" + ValidationError.quote(key) + "]");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FieldPath p && p.text.equals(text);
  }

  @Override
  public int hashCode() {
    return text.hashCode();
  }

  @Override
  public String toString() {
    return text;
  }
}
