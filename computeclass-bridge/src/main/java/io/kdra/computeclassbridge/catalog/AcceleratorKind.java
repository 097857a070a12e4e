package io.kdra.computeclassbridge.catalog;

import java.util.Locale;

/**
 * Which ComputeClass field an accelerator type belongs in: {@code gpu.type} or {@code tpu.type}.
 */
public enum AcceleratorKind {
  GPU,
  TPU;

  /** The lower-case spelling used in the catalog and in messages. */
  public String text() {
    return name().toLowerCase(Locale.ROOT);
  }

  static AcceleratorKind parse(String text, String where) {
    for (AcceleratorKind k : values()) {
      if (k.text().equals(text)) {
        return k;
      }
    }
    throw new IllegalArgumentException(where + ": kind must be gpu or tpu, got " + text);
  }
}
