package io.kdra.core.cel.golang;

import java.util.Optional;

/**
 * Go's {@code strconv.ParseFloat(s, 64)}, which cel-go's {@code double(string)} is: Go's float
 * literal syntax (decimal, or hexadecimal with a mandatory {@code p} exponent, digits separated by
 * single underscores), {@code inf}/{@code infinity} with an optional sign and {@code nan}, any
 * case; no surrounding spaces, no Java suffixes ({@code 1d}); a value beyond the double range is an
 * error (ErrRange), one below it 0. Hand-written: Java's parser accepts other strings.
 */
public final class GoParseFloat {

  private GoParseFloat() {}

  /** The value, or empty where Go's ParseFloat fails. */
  public static Optional<Double> parse(String s) {
    Optional<Double> special = special(s);
    if (special.isPresent()) {
      return special;
    }
    if (!isFloatLiteral(s)) {
      return Optional.empty();
    }
    double value = Double.parseDouble(s.replace("_", ""));
    return Double.isInfinite(value) ? Optional.empty() : Optional.of(value);
  }

  private static Optional<Double> special(String s) {
    String rest = s;
    double sign = 1;
    boolean signed = false;
    if (!rest.isEmpty() && (rest.charAt(0) == '+' || rest.charAt(0) == '-')) {
      sign = rest.charAt(0) == '-' ? -1 : 1;
      signed = true;
      rest = rest.substring(1);
    }
    if (rest.equalsIgnoreCase("inf") || rest.equalsIgnoreCase("infinity")) {
      return Optional.of(sign * Double.POSITIVE_INFINITY);
    }
    if (!signed && rest.equalsIgnoreCase("nan")) {
      return Optional.of(Double.NaN);
    }
    return Optional.empty();
  }

  /** Go's {@code readFloat} consuming the whole string, and {@code underscoreOK}. */
  private static boolean isFloatLiteral(String s) {
    int i = 0;
    int n = s.length();
    if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
      i++;
    }
    boolean hex =
        i + 1 < n && s.charAt(i) == '0' && (s.charAt(i + 1) == 'x' || s.charAt(i + 1) == 'X');
    if (hex) {
      i += 2;
    }
    boolean underscores = false;
    boolean sawDot = false;
    boolean sawDigits = false;
    for (; i < n; i++) {
      char c = s.charAt(i);
      if (c == '_') {
        underscores = true;
      } else if (c == '.') {
        if (sawDot) {
          break;
        }
        sawDot = true;
      } else if (c >= '0' && c <= '9' || hex && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')) {
        sawDigits = true;
      } else {
        break;
      }
    }
    if (!sawDigits) {
      return false;
    }
    boolean sawExponent = false;
    if (i < n
        && (hex
            ? s.charAt(i) == 'p' || s.charAt(i) == 'P'
            : s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
      i++;
      if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
        i++;
      }
      if (i >= n || s.charAt(i) < '0' || s.charAt(i) > '9') {
        return false;
      }
      for (; i < n && (s.charAt(i) >= '0' && s.charAt(i) <= '9' || s.charAt(i) == '_'); i++) {
        underscores |= s.charAt(i) == '_';
      }
      sawExponent = true;
    }
    if (hex && !sawExponent || i != n) {
      return false;
    }
    return !underscores || underscoreOk(s);
  }

  /** Underscores only between digits, or between the base prefix and a digit. */
  private static boolean underscoreOk(String s) {
    char saw = '^';
    int i = 0;
    if (!s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
      s = s.substring(1);
    }
    boolean hex = false;
    if (s.length() >= 2 && s.charAt(0) == '0' && "bBoOxX".indexOf(s.charAt(1)) >= 0) {
      i = 2;
      saw = '0';
      hex = s.charAt(1) == 'x' || s.charAt(1) == 'X';
    }
    for (; i < s.length(); i++) {
      char c = s.charAt(i);
      char lower = Character.toLowerCase(c);
      if (c >= '0' && c <= '9' || hex && lower >= 'a' && lower <= 'f') {
        saw = '0';
        continue;
      }
      if (c == '_') {
        if (saw != '0') {
          return false;
        }
        saw = '_';
        continue;
      }
      if (saw == '_') {
        return false;
      }
      saw = '!';
    }
    return saw != '_';
  }
}
