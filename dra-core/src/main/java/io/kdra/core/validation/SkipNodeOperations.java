package io.kdra.core.validation;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The values of a ResourceSlice's {@code skipNodeOperations} (DRAOptionalNodeOperations, alpha in
 * 1.37) as the 1.37 API server accepts them: its declarative rules (a set of known values) and
 * {@code validateSkipNodeOperations} (skipping the prepare call needs the unprepare call skipped
 * too, or {@code *}). Pure.
 */
public final class SkipNodeOperations {

  /** All node operations (kubelet gRPC calls) of the driver. */
  public static final String ALL = "*";

  public static final String PREPARE = "NodePrepareResources";
  public static final String UNPREPARE = "NodeUnprepareResources";

  private static final List<String> SUPPORTED = List.of(ALL, PREPARE, UNPREPARE);

  private SkipNodeOperations() {}

  /**
   * The problems of {@code operations}, in upstream's words; empty when the API server takes it.
   */
  public static List<String> check(List<String> operations) {
    List<String> errors = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (String op : operations) {
      if (!SUPPORTED.contains(op)) {
        errors.add(
            "Unsupported value: \""
                + op
                + "\": supported values: \"*\", \"NodePrepareResources\","
                + " \"NodeUnprepareResources\"");
      } else if (!seen.add(op)) {
        errors.add("Duplicate value: \"" + op + "\"");
      }
    }
    if (seen.contains(PREPARE) && !seen.contains(UNPREPARE) && !seen.contains(ALL)) {
      errors.add(
          "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped");
    }
    return errors;
  }
}
