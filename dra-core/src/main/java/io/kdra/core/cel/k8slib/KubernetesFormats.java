package io.kdra.core.cel.k8slib;

import io.kdra.core.cel.golang.GoRequestUri;
import java.nio.charset.StandardCharsets;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The named formats of the Kubernetes CEL format library (k8s.io/apiserver {@code
 * library.ConstantFormats}) with their validators, which return upstream's error list word for
 * word: apimachinery's {@code NameIsDNSLabel} ... (util/validation, lengths in "characters") and
 * {@code content.IsLabelKey}, {@code content.IsLabelValue} (lengths in "bytes"), kube-openapi's
 * strfmt {@code uuid}, {@code byte}, {@code date}, {@code datetime}, and Go's {@code
 * url.ParseRequestURI} ({@link GoRequestUri}). Lengths are Go's: UTF-8 bytes. Hand-written: no Java
 * library has these exact rules and messages.
 */
public final class KubernetesFormats {

  /** A named format: equal by name, as upstream's {@code Format.Equal}. */
  public record NamedFormat(String name, Function<String, List<String>> validator) {
    @Override
    public boolean equals(Object o) {
      return o instanceof NamedFormat other && other.name.equals(name);
    }

    @Override
    public int hashCode() {
      return name.hashCode();
    }

    @Override
    public String toString() {
      return name;
    }
  }

  private static final String DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
  private static final String DNS1123_SUBDOMAIN_FMT =
      DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*";
  private static final String DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?";
  private static final String LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
  private static final String LABEL_VALUE_FMT = "(" + LABEL_KEY_FMT + ")?";
  private static final Pattern DNS1123_LABEL = Pattern.compile(DNS1123_LABEL_FMT);
  private static final Pattern DNS1123_SUBDOMAIN = Pattern.compile(DNS1123_SUBDOMAIN_FMT);
  private static final Pattern DNS1035_LABEL = Pattern.compile(DNS1035_LABEL_FMT);
  private static final Pattern LABEL_KEY = Pattern.compile(LABEL_KEY_FMT);
  private static final Pattern LABEL_VALUE = Pattern.compile(LABEL_VALUE_FMT);
  private static final String DNS1123_LABEL_MSG =
      "a lowercase RFC 1123 label must consist of "
          + "lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
          + "character";
  private static final String DNS1123_SUBDOMAIN_MSG =
      "a lowercase RFC 1123 subdomain must "
          + "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
          + "an alphanumeric character";
  private static final String DNS1035_LABEL_MSG =
      "a DNS-1035 label must consist of lower case "
          + "alphanumeric characters or '-', start with an alphabetic character, and end with an "
          + "alphanumeric character";
  private static final String LABEL_KEY_MSG =
      "must consist of alphanumeric characters, '-', '_' "
          + "or '.', and must start and end with an alphanumeric character";
  private static final String LABEL_VALUE_MSG =
      "a valid label must be an empty string or "
          + "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
          + "alphanumeric character";
  // strfmt's patterns; Go's "." is any character but \n, Java's with UNIX_LINES
  private static final Pattern UUID =
      Pattern.compile("(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}");
  private static final Pattern BASE64 =
      Pattern.compile(
          "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})");
  private static final Pattern TIME =
      Pattern.compile(
          "([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))",
          Pattern.UNIX_LINES);
  private static final Pattern DATE = Pattern.compile("([0-9]{4})-([0-9]{2})-([0-9]{2})");

  /** By the names of {@code format.<name>()} and {@code format.named(name)}. */
  static final Map<String, NamedFormat> ALL = formats();

  private KubernetesFormats() {}

  private static Map<String, NamedFormat> formats() {
    Map<String, NamedFormat> all = new LinkedHashMap<>();
    all.put("dns1123Label", new NamedFormat("DNS1123Label", s -> dns1123Label(s, false)));
    all.put(
        "dns1123Subdomain", new NamedFormat("DNS1123Subdomain", s -> dns1123Subdomain(s, false)));
    all.put("dns1035Label", new NamedFormat("DNS1035Label", s -> dns1035Label(s, false)));
    all.put("qualifiedName", new NamedFormat("QualifiedName", KubernetesFormats::labelKey));
    all.put(
        "dns1123LabelPrefix", new NamedFormat("DNS1123LabelPrefix", s -> dns1123Label(s, true)));
    all.put(
        "dns1123SubdomainPrefix",
        new NamedFormat("DNS1123SubdomainPrefix", s -> dns1123Subdomain(s, true)));
    all.put(
        "dns1035LabelPrefix", new NamedFormat("DNS1035LabelPrefix", s -> dns1035Label(s, true)));
    all.put("labelValue", new NamedFormat("LabelValue", KubernetesFormats::labelValue));
    all.put(
        "uri",
        new NamedFormat(
            "URI",
            s -> {
              String error = GoRequestUri.validate(s);
              return error == null ? List.of() : List.of(error);
            }));
    all.put(
        "uuid",
        new NamedFormat(
            "uuid",
            s ->
                UUID.matcher(s).matches() ? List.of() : List.of("does not match the UUID format")));
    all.put(
        "byte",
        new NamedFormat(
            "byte", s -> BASE64.matcher(s).matches() ? List.of() : List.of("invalid base64")));
    all.put("date", new NamedFormat("date", s -> isDate(s) ? List.of() : List.of("invalid date")));
    all.put(
        "datetime",
        new NamedFormat("datetime", s -> isDateTime(s) ? List.of() : List.of("invalid datetime")));
    return Collections.unmodifiableMap(all);
  }

  private static int bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  /**
   * A name to check and its length in bytes. For the prefix formats apimachinery's {@code
   * maskTrailingDash} replaces the last two bytes of a name ending in "-" by "a" (sic); a
   * multi-byte character split so decodes to U+FFFD, which no pattern here matches either.
   */
  private record Masked(String text, int length) {
    static Masked of(String name, boolean prefix) {
      byte[] b = name.getBytes(StandardCharsets.UTF_8);
      if (prefix && b.length > 1 && name.endsWith("-")) {
        byte[] masked = Arrays.copyOf(b, b.length - 1);
        masked[b.length - 2] = 'a';
        return new Masked(new String(masked, StandardCharsets.UTF_8), masked.length);
      }
      return new Masked(name, b.length);
    }
  }

  private static List<String> dns1123Label(String value, boolean prefix) {
    Masked m = Masked.of(value, prefix);
    List<String> errs = new ArrayList<>();
    if (m.length() > 63) {
      errs.add("must be no more than 63 characters");
    }
    if (!DNS1123_LABEL.matcher(m.text()).matches()) {
      if (DNS1123_SUBDOMAIN.matcher(m.text()).matches()) {
        errs.add("must not contain dots");
      } else {
        errs.add(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"));
      }
    }
    return errs;
  }

  private static List<String> dns1123Subdomain(String value, boolean prefix) {
    Masked m = Masked.of(value, prefix);
    return subdomain(m.text(), m.length(), "characters");
  }

  private static List<String> subdomain(String text, int length, String unit) {
    List<String> errs = new ArrayList<>();
    if (length > 253) {
      errs.add("must be no more than 253 " + unit);
    }
    if (!DNS1123_SUBDOMAIN.matcher(text).matches()) {
      errs.add(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"));
    }
    return errs;
  }

  private static List<String> dns1035Label(String value, boolean prefix) {
    Masked m = Masked.of(value, prefix);
    List<String> errs = new ArrayList<>();
    if (m.length() > 63) {
      errs.add("must be no more than 63 characters");
    }
    if (!DNS1035_LABEL.matcher(m.text()).matches()) {
      errs.add(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"));
    }
    return errs;
  }

  /** content.IsLabelKey (qualifiedName). */
  private static List<String> labelKey(String value) {
    List<String> errs = new ArrayList<>();
    String[] parts = value.split("/", -1);
    String name;
    switch (parts.length) {
      case 1 -> name = parts[0];
      case 2 -> {
        String prefix = parts[0];
        name = parts[1];
        if (prefix.isEmpty()) {
          errs.add("prefix part must be non-empty");
        } else {
          subdomain(prefix, bytes(prefix), "bytes").forEach(m -> errs.add("prefix part " + m));
        }
      }
      default -> {
        errs.add(
            "a valid label key "
                + regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. "
                + "'example.com/MyName')");
        return errs;
      }
    }
    if (name.isEmpty()) {
      errs.add("name part must be non-empty");
    } else if (bytes(name) > 63) {
      errs.add("name part must be no more than 63 bytes");
    }
    if (!LABEL_KEY.matcher(name).matches()) {
      errs.add(
          "name part " + regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc"));
    }
    return errs;
  }

  private static List<String> labelValue(String value) {
    List<String> errs = new ArrayList<>();
    if (bytes(value) > 63) {
      errs.add("must be no more than 63 bytes");
    }
    if (!LABEL_VALUE.matcher(value).matches()) {
      errs.add(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"));
    }
    return errs;
  }

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

  /** Go's {@code time.Parse("2006-01-02", s) == nil}: the calendar date must exist. */
  static boolean isDate(String s) {
    Matcher m = DATE.matcher(s);
    if (!m.matches()) {
      return false;
    }
    int year = Integer.parseInt(m.group(1));
    int month = Integer.parseInt(m.group(2));
    int day = Integer.parseInt(m.group(3));
    return month >= 1
        && month <= 12
        && day >= 1
        && day <= YearMonth.of(year, month).lengthOfMonth();
  }

  /** strfmt's {@code IsDateTime}. */
  static boolean isDateTime(String s) {
    if (bytes(s) < 4) {
      return false;
    }
    String[] parts = lowerCaseAsGo(s).split("t", -1);
    if (parts.length < 2 || !isDate(parts[0])) {
      return false;
    }
    Matcher m = TIME.matcher(parts[1]);
    return m.matches()
        && m.group(1).compareTo("23") <= 0
        && m.group(2).compareTo("59") <= 0
        && m.group(3).compareTo("59") <= 0;
  }

  /** Go's {@code strings.ToLower}: per code point, simple mappings. */
  private static String lowerCaseAsGo(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    s.codePoints().forEach(c -> sb.appendCodePoint(Character.toLowerCase(c)));
    return sb.toString();
  }
}
