package io.kdra.core.model;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A semantic version (semver 2.0.0) as the Kubernetes CEL {@code semver} library and DRA version
 * attributes use it (upstream parses with {@code blang/semver/v4}).
 *
 * <p>{@link #parse} is strict: {@code MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]}, no leading zeros, no
 * {@code v}. {@link #parseNormalized} first drops a leading {@code v}, fills in a missing minor or
 * patch and strips leading zeros, like {@code semver(s, true)}. Ordering follows semver precedence;
 * build metadata is ignored by {@link #compareTo} but kept by {@link #equals}.
 */
public final class Semver implements Comparable<Semver> {

  private static final Pattern STRICT =
      Pattern.compile(
          "^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)"
              + "(?:-([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?"
              + "(?:\\+([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?$");
  private static final Pattern NUMERIC = Pattern.compile("[0-9]+");

  private final long major;
  private final long minor;
  private final long patch;
  private final List<String> preRelease;
  private final List<String> build;

  private Semver(long major, long minor, long patch, List<String> preRelease, List<String> build) {
    this.major = major;
    this.minor = minor;
    this.patch = patch;
    this.preRelease = List.copyOf(preRelease);
    this.build = List.copyOf(build);
  }

  /**
   * Parses a strict semantic version.
   *
   * @throws IllegalArgumentException naming the text and the problem
   */
  public static Semver parse(String text) {
    Matcher m = text == null ? null : STRICT.matcher(text);
    if (m == null || !m.matches()) {
      throw new IllegalArgumentException(
          "invalid semantic version \""
              + text
              + "\": expected MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD] without leading zeros");
    }
    List<String> pre = m.group(4) == null ? List.of() : List.of(m.group(4).split("\\."));
    for (String id : pre) {
      if (NUMERIC.matcher(id).matches() && id.length() > 1 && id.charAt(0) == '0') {
        throw new IllegalArgumentException(
            "invalid semantic version \""
                + text
                + "\": numeric pre-release identifier \""
                + id
                + "\" has a leading zero");
      }
    }
    List<String> build = m.group(5) == null ? List.of() : List.of(m.group(5).split("\\."));
    return new Semver(
        number(text, m.group(1)), number(text, m.group(2)), number(text, m.group(3)), pre, build);
  }

  /**
   * Parses leniently: {@code v1.2} becomes {@code 1.2.0}, {@code 01.02.03} becomes {@code 1.2.3}.
   */
  public static Semver parseNormalized(String text) {
    if (text == null) {
      return parse(null);
    }
    String s = text.startsWith("v") ? text.substring(1) : text;
    int suffixAt = indexOfAny(s, '-', '+');
    String core = suffixAt < 0 ? s : s.substring(0, suffixAt);
    String suffix = suffixAt < 0 ? "" : s.substring(suffixAt);
    String[] parts = core.split("\\.", -1);
    if (parts.length > 3) {
      return parse(text);
    }
    List<String> normalized = new ArrayList<>();
    for (String p : parts) {
      normalized.add(NUMERIC.matcher(p).matches() ? new BigInteger(p).toString() : p);
    }
    while (normalized.size() < 3) {
      normalized.add("0");
    }
    return parse(String.join(".", normalized) + suffix);
  }

  /** True when {@link #parse} (or, with {@code normalize}, {@link #parseNormalized}) accepts it. */
  public static boolean isSemver(String text, boolean normalize) {
    try {
      if (normalize) {
        parseNormalized(text);
      } else {
        parse(text);
      }
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static int indexOfAny(String s, char a, char b) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) == a || s.charAt(i) == b) {
        return i;
      }
    }
    return -1;
  }

  private static long number(String text, String digits) {
    try {
      return Long.parseLong(digits);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "invalid semantic version \"" + text + "\": component " + digits + " is too large");
    }
  }

  public long major() {
    return major;
  }

  public long minor() {
    return minor;
  }

  public long patch() {
    return patch;
  }

  @Override
  public int compareTo(Semver o) {
    int c = Long.compare(major, o.major);
    if (c == 0) {
      c = Long.compare(minor, o.minor);
    }
    if (c == 0) {
      c = Long.compare(patch, o.patch);
    }
    return c != 0 ? c : comparePreRelease(preRelease, o.preRelease);
  }

  /** A version without pre-release ranks above one with; identifiers compare numerically first. */
  private static int comparePreRelease(List<String> a, List<String> b) {
    if (a.isEmpty() || b.isEmpty()) {
      return Boolean.compare(a.isEmpty(), b.isEmpty());
    }
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      String x = a.get(i);
      String y = b.get(i);
      boolean xn = NUMERIC.matcher(x).matches();
      boolean yn = NUMERIC.matcher(y).matches();
      int c;
      if (xn && yn) {
        c = new BigInteger(x).compareTo(new BigInteger(y));
      } else if (xn != yn) {
        c = xn ? -1 : 1;
      } else {
        c = x.compareTo(y);
      }
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.size(), b.size());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Semver s && compareTo(s) == 0 && build.equals(s.build);
  }

  @Override
  public int hashCode() {
    return Objects.hash(major, minor, patch, preRelease, build);
  }

  @Override
  public String toString() {
    StringBuilder sb =
        new StringBuilder().append(major).append('.').append(minor).append('.').append(patch);
    if (!preRelease.isEmpty()) {
      sb.append('-').append(String.join(".", preRelease));
    }
    if (!build.isEmpty()) {
      sb.append('+').append(String.join(".", build));
    }
    return sb.toString();
  }
}
