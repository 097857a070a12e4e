package io.kdra.kubectl;

import java.util.Locale;

/** What {@code why} explains: {@code pod/NAME} or {@code resourceclaim/NAME}, kubectl style. */
record Target(Kind kind, String name) {

  enum Kind {
    POD,
    CLAIM
  }

  /** Parses {@code TYPE/NAME}; the type as kubectl spells it (plural, short name). */
  static Target parse(String arg) {
    int slash = arg.indexOf('/');
    if (slash <= 0 || slash == arg.length() - 1 || arg.indexOf('/', slash + 1) >= 0) {
      throw new IllegalArgumentException(
          "expected pod/NAME or resourceclaim/NAME, not \"" + arg + "\"");
    }
    String type = arg.substring(0, slash).toLowerCase(Locale.ROOT);
    String name = arg.substring(slash + 1);
    return switch (type) {
      case "pod", "pods", "po" -> new Target(Kind.POD, name);
      case "resourceclaim",
          "resourceclaims",
          "resourceclaim.resource.k8s.io",
          "resourceclaims.resource.k8s.io" ->
          new Target(Kind.CLAIM, name);
      default ->
          throw new IllegalArgumentException(
              "cannot explain \"" + type + "\": expected pod/NAME or resourceclaim/NAME");
    };
  }
}
