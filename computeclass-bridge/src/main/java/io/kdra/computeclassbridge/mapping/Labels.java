package io.kdra.computeclassbridge.mapping;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;

/**
 * Labels and annotations that mark what the bridge generated and for which ComputeClass. Every
 * delete the bridge issues is restricted to objects carrying {@link #MANAGED_BY}, so hand-made
 * objects of the same kinds are never touched.
 */
public final class Labels {

  /** On everything the bridge generates. */
  public static final String MANAGED_BY = "app.kubernetes.io/managed-by";

  /** Value of {@link #MANAGED_BY}. */
  public static final String MANAGER = "kdra-computeclass-bridge";

  /** On templates (and the claims made from them): the ComputeClass, see {@link #value}. */
  public static final String COMPUTE_CLASS = "computeclass.kdra.io/name";

  /** On DeviceClasses: the accelerator type they select. */
  public static final String ACCELERATOR = "computeclass.kdra.io/accelerator";

  /**
   * Prefix of the per-user label on shared DeviceClasses: one key per ComputeClass that uses the
   * class ({@code used-by.computeclass.kdra.io/<name>}), because one label value cannot list
   * several.
   */
  public static final String USED_BY_PREFIX = "used-by.computeclass.kdra.io/";

  /** Annotation with the full ComputeClass name when the label had to be shortened. */
  public static final String COMPUTE_CLASS_ANNOTATION = "computeclass.kdra.io/name";

  /** Annotation with the accelerator's human description. */
  public static final String DESCRIPTION = "computeclass.kdra.io/description";

  private static final int MAX_LABEL_VALUE = 63;

  private Labels() {}

  /** The selector for everything generated. */
  public static Map<String, String> managed() {
    return Map.of(MANAGED_BY, MANAGER);
  }

  /** The selector for the templates of one ComputeClass. */
  public static Map<String, String> templatesOf(String computeClass) {
    return Map.of(MANAGED_BY, MANAGER, COMPUTE_CLASS, value(computeClass));
  }

  /** The per-user label key on shared DeviceClasses. */
  public static String usedBy(String computeClass) {
    return USED_BY_PREFIX + value(computeClass);
  }

  /**
   * A ComputeClass name as a label value or name: unchanged when it fits in 63 characters,
   * otherwise its first 52 characters, a dash and 10 hex digits of its SHA-256, so that long names
   * stay distinct and recognisable.
   */
  public static String value(String name) {
    if (name.length() <= MAX_LABEL_VALUE) {
      return name;
    }
    String head = name.substring(0, 52).replaceAll("[^A-Za-z0-9]+$", "");
    return head + "-" + sha256(name).substring(0, 10);
  }

  static String sha256(String s) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
