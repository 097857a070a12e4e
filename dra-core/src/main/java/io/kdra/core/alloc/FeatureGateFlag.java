package io.kdra.core.alloc;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The value of upstream components' {@code --feature-gates} flag: {@code Name=true,Other=false}.
 * Blanks around entries and empty entries are ignored; a later entry for the same gate wins; values
 * are Go's booleans ({@code true}, {@code True}, {@code TRUE}, {@code t}, {@code T}, {@code 1} and
 * the same for false). Which names are known is the caller's to say.
 */
public final class FeatureGateFlag {

  private FeatureGateFlag() {}

  /**
   * The gates of {@code spec}, name to value, in the order first named.
   *
   * @throws IllegalArgumentException naming the entry with a missing or a non-boolean value
   */
  public static Map<String, Boolean> parse(String spec) {
    Map<String, Boolean> gates = new LinkedHashMap<>();
    for (String entry : spec.split(",", -1)) {
      String e = entry.strip();
      if (e.isEmpty()) {
        continue;
      }
      int eq = e.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("missing bool value for " + e);
      }
      String name = e.substring(0, eq).strip();
      gates.put(name, parseBool(name, e.substring(eq + 1).strip()));
    }
    return gates;
  }

  /** Go's {@code strconv.ParseBool}, which upstream's feature gates use. */
  private static boolean parseBool(String gate, String value) {
    switch (value) {
      case "1":
      case "t":
      case "T":
      case "true":
      case "TRUE":
      case "True":
        return true;
      case "0":
      case "f":
      case "F":
      case "false":
      case "FALSE":
      case "False":
        return false;
      default:
        throw new IllegalArgumentException(
            "invalid value of " + gate + "=" + value + ": not a bool (true or false)");
    }
  }
}
