package io.kdra.core.config;

/**
 * An opaque config of our drivers that {@link OpaqueConfigDecoder} refuses: the field (a JSON path
 * into the object that holds it) and what is wrong with it, e.g. {@code
 * spec.devices.config[0].opaque.parameters.sharing.mps.threads: unknown field}.
 */
public final class OpaqueConfigException extends Exception {
  private final String field;
  private final String problem;

  public OpaqueConfigException(String field, String problem) {
    super(field + ": " + problem);
    this.field = field;
    this.problem = problem;
  }

  /** The path of the offending field. */
  public String field() {
    return field;
  }

  /** What is wrong with it, without the path. */
  public String problem() {
    return problem;
  }
}
