package io.kdra.core.validation;

import io.kdra.core.model.Semver;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Name and value format checks of {@code resource.k8s.io/v1}, with the messages of {@code
 * k8s.io/apimachinery/pkg/util/validation}.
 *
 * <p>Every check returns the list of problems, empty when the value is valid; it never throws and
 * accepts {@code null} as the empty string. Lengths are counted in UTF-8 bytes, as Go's {@code len}
 * does; for the ASCII-only formats that is the same as characters.
 */
public final class Names {

  private static final String LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
  private static final String SUBDOMAIN_FMT = LABEL_FMT + "(\\." + LABEL_FMT + ")*";
  private static final String C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*";
  private static final String QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
  private static final String LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?";

  private static final Pattern LABEL = Pattern.compile(LABEL_FMT);
  private static final Pattern SUBDOMAIN = Pattern.compile(SUBDOMAIN_FMT);
  private static final Pattern C_IDENTIFIER = Pattern.compile(C_IDENTIFIER_FMT);
  private static final Pattern QUALIFIED_NAME = Pattern.compile(QUALIFIED_NAME_FMT);
  private static final Pattern LABEL_VALUE = Pattern.compile(LABEL_VALUE_FMT);

  static final String LABEL_ERROR =
      regexError(
          "a lowercase RFC 1123 label must consist of lower "
              + "case alphanumeric characters or '-', and must start and end with an alphanumeric "
              + "character",
          LABEL_FMT,
          "my-name",
          "123-abc");
  static final String SUBDOMAIN_ERROR =
      regexError(
          "a lowercase RFC 1123 subdomain must consist "
              + "of lower case alphanumeric characters, '-' or '.', and must start and end with an "
              + "alphanumeric character",
          SUBDOMAIN_FMT,
          "example.com");
  static final String C_IDENTIFIER_ERROR =
      regexError(
          "a valid C identifier must start with "
              + "alphabetic character or '_', followed by a string of alphanumeric characters or '_'",
          C_IDENTIFIER_FMT,
          "my_name",
          "MY_NAME",
          "MyName");
  private static final String QUALIFIED_NAME_MSG =
      "must consist of alphanumeric characters, "
          + "'-', '_' or '.', and must start and end with an alphanumeric character";
  static final String QUALIFIED_NAME_ERROR =
      regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc");
  static final String LABEL_VALUE_ERROR =
      regexError(
          "a valid label must be an empty string or "
              + "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              + "alphanumeric character",
          LABEL_VALUE_FMT,
          "MyValue",
          "my_value",
          "12345");
  static final String SEMVER_ERROR = "must be a string compatible with semver.org spec 2.0.0";

  private Names() {}

  /** A DNS-1123 label: at most 63 characters of {@code [a-z0-9-]}, alphanumeric at both ends. */
  public static List<String> dns1123Label(String value) {
    return format(value, Limits.DNS1123_LABEL_MAX_LENGTH, LABEL, LABEL_ERROR);
  }

  /** A DNS-1123 subdomain: at most 253 characters, dot-separated labels. */
  public static List<String> dns1123Subdomain(String value) {
    return format(value, Limits.DNS1123_SUBDOMAIN_MAX_LENGTH, SUBDOMAIN, SUBDOMAIN_ERROR);
  }

  /**
   * A driver name, checked like a CSI driver name: required, at most 63 characters and a DNS
   * subdomain after lower-casing (so upper case is tolerated, as upstream does).
   */
  public static List<String> driverName(String value) {
    String v = nullToEmpty(value);
    if (v.isEmpty()) {
      return List.of("must be non-empty");
    }
    List<String> errors = new ArrayList<>();
    if (bytes(v) > Limits.DRIVER_NAME_MAX_LENGTH) {
      errors.add(maxLenError(Limits.DRIVER_NAME_MAX_LENGTH));
    }
    errors.addAll(dns1123Subdomain(v.toLowerCase(Locale.ROOT)));
    return errors;
  }

  /** A pool name: non-empty, at most 253 characters, DNS subdomains separated by {@code /}. */
  public static List<String> poolName(String value) {
    String v = nullToEmpty(value);
    if (v.isEmpty()) {
      return List.of("must be non-empty");
    }
    List<String> errors = new ArrayList<>();
    if (bytes(v) > Limits.POOL_NAME_MAX_LENGTH) {
      errors.add(maxLenError(Limits.POOL_NAME_MAX_LENGTH));
    }
    for (String part : v.split("/", -1)) {
      errors.addAll(dns1123Subdomain(part));
    }
    return errors;
  }

  /** A device name is a DNS-1123 label. */
  public static List<String> deviceName(String value) {
    return dns1123Label(value);
  }

  /** A C identifier of at most 32 characters, the id part of a qualified name. */
  public static List<String> cIdentifier(String value) {
    return format(value, Limits.DEVICE_MAX_ID_LENGTH, C_IDENTIFIER, C_IDENTIFIER_ERROR);
  }

  /**
   * An attribute or capacity name: a C identifier, or {@code domain/id} with the domain checked
   * like a driver name. More than one slash is rejected (upstream accepted it before 1.35).
   */
  public static List<String> qualifiedName(String value) {
    String v = nullToEmpty(value);
    String[] parts = v.split("/", -1);
    if (parts.length == 1) {
      return cIdentifier(v);
    }
    if (parts.length > 2) {
      return List.of("must not contain more than one slash");
    }
    List<String> errors = new ArrayList<>();
    if (parts[0].isEmpty()) {
      errors.add("the domain must not be empty");
    } else {
      errors.addAll(driverName(parts[0]));
    }
    if (parts[1].isEmpty()) {
      errors.add("the name must not be empty");
    } else {
      errors.addAll(cIdentifier(parts[1]));
    }
    return errors;
  }

  /** Like {@link #qualifiedName}, but the domain is mandatory. */
  public static List<String> fullyQualifiedName(String value) {
    List<String> errors = new ArrayList<>(qualifiedName(value));
    if (!nullToEmpty(value).contains("/")) {
      errors.add("a fully qualified name must be a domain and a name separated by a slash");
    }
    return errors;
  }

  /**
   * A Kubernetes label key (taint and toleration keys): an optional DNS subdomain prefix and a
   * slash, then a name of at most 63 characters of {@code [A-Za-z0-9-_.]}, alphanumeric at both
   * ends.
   */
  public static List<String> labelName(String value) {
    String v = nullToEmpty(value);
    String[] parts = v.split("/", -1);
    if (parts.length > 2) {
      return List.of(
          "a qualified name "
              + QUALIFIED_NAME_ERROR
              + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
    }
    List<String> errors = new ArrayList<>();
    String name = parts[parts.length - 1];
    if (parts.length == 2) {
      if (parts[0].isEmpty()) {
        errors.add("prefix part must be non-empty");
      } else {
        dns1123Subdomain(parts[0]).forEach(m -> errors.add("prefix part " + m));
      }
    }
    if (name.isEmpty()) {
      errors.add("name part must be non-empty");
    } else if (bytes(name) > Limits.LABEL_NAME_MAX_LENGTH) {
      errors.add("name part " + maxLenError(Limits.LABEL_NAME_MAX_LENGTH));
    }
    if (!QUALIFIED_NAME.matcher(name).matches()) {
      errors.add("name part " + QUALIFIED_NAME_ERROR);
    }
    return errors;
  }

  /** A label value (taint and toleration values): empty, or at most 63 label characters. */
  public static List<String> labelValue(String value) {
    return format(value, Limits.LABEL_VALUE_MAX_LENGTH, LABEL_VALUE, LABEL_VALUE_ERROR);
  }

  /** A version attribute: strict semver 2.0.0 (no {@code v}, no leading zeros), at most 64. */
  public static List<String> versionValue(String value) {
    String v = nullToEmpty(value);
    List<String> errors = new ArrayList<>();
    if (!Semver.isSemver(v, false)) {
      errors.add(SEMVER_ERROR);
    }
    errors.addAll(attributeString(v));
    return errors;
  }

  /** A string attribute value: at most 64 bytes. */
  public static List<String> attributeString(String value) {
    return bytes(nullToEmpty(value)) > Limits.DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH
        ? List.of(maxLenError(Limits.DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH))
        : List.of();
  }

  /** The message upstream's {@code MaxLenError} gives. */
  static String maxLenError(int length) {
    return "must be no more than " + length + " characters";
  }

  /** The length as Go counts it: bytes of the UTF-8 encoding. */
  static int bytes(String value) {
    return value.getBytes(StandardCharsets.UTF_8).length;
  }

  private static List<String> format(String value, int max, Pattern pattern, String error) {
    String v = nullToEmpty(value);
    List<String> errors = new ArrayList<>(2);
    if (bytes(v) > max) {
      errors.add(maxLenError(max));
    }
    if (!pattern.matcher(v).matches()) {
      errors.add(error);
    }
    return errors;
  }

  /** Upstream's {@code RegexError}, down to its spacing, so messages compare equal. */
  private static String regexError(String msg, String fmt, String... examples) {
    StringBuilder sb = new StringBuilder(msg).append(" (e.g. ");
    for (int i = 0; i < examples.length; i++) {
      if (i > 0) {
        sb.append(" or ");
      }
      sb.append('\'').append(examples[i]).append("', ");
    }
    return sb.append("regex used for validation is '").append(fmt).append("')").toString();
  }

  private static String nullToEmpty(String value) {
    return value == null ? "" : value;
  }
}
