package io.kdra.core.model;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;

/**
 * A typed device attribute value: exactly one of int, bool, string or version, as in {@code
 * resource.k8s.io/v1 DeviceAttribute}. Equality is by type and value, which is what {@code
 * matchAttribute} constraints compare.
 */
public sealed interface AttributeValue {

  /** The value as CEL sees it: Long, Boolean, String or {@link Semver}. */
  Object celValue();

  /** The name of the type, as used in messages: int, bool, string or version. */
  String typeName();

  record IntValue(long value) implements AttributeValue {
    @Override
    public Object celValue() {
      return value;
    }

    @Override
    public String typeName() {
      return "int";
    }
  }

  record BoolValue(boolean value) implements AttributeValue {
    @Override
    public Object celValue() {
      return value;
    }

    @Override
    public String typeName() {
      return "bool";
    }
  }

  record StringValue(String value) implements AttributeValue {
    @Override
    public Object celValue() {
      return value;
    }

    @Override
    public String typeName() {
      return "string";
    }
  }

  /** A semver attribute; kept as text (canonical by validation) and parsed once. */
  record VersionValue(Semver value) implements AttributeValue {
    @Override
    public Object celValue() {
      return value;
    }

    @Override
    public String typeName() {
      return "version";
    }
  }

  /**
   * Converts the API form.
   *
   * @throws IllegalArgumentException when not exactly one of the value fields is set, or the
   *     version is not valid semver
   */
  static AttributeValue from(DeviceAttribute attribute) {
    int set =
        (attribute.getInt() != null ? 1 : 0)
            + (attribute.getBool() != null ? 1 : 0)
            + (attribute.getString() != null ? 1 : 0)
            + (attribute.getVersion() != null ? 1 : 0);
    if (set != 1) {
      throw new IllegalArgumentException(
          "exactly one of int, bool, string or version must be set, found " + set);
    }
    if (attribute.getInt() != null) {
      return new IntValue(attribute.getInt());
    }
    if (attribute.getBool() != null) {
      return new BoolValue(attribute.getBool());
    }
    if (attribute.getString() != null) {
      return new StringValue(attribute.getString());
    }
    return new VersionValue(Semver.parse(attribute.getVersion()));
  }
}
