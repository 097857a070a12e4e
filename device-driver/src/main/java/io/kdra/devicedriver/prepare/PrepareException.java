package io.kdra.devicedriver.prepare;

/**
 * A claim cannot be prepared because of its content; the message names the field (as a JSON path
 * into the ResourceClaim) and what is wrong, e.g. {@code status.allocation.devices.results[1].pool:
 * "node-b" is not this node's pool "node-a"}.
 */
public class PrepareException extends Exception {
  private final String field;

  public PrepareException(String field, String problem) {
    super(field + ": " + problem);
    this.field = field;
  }

  /** The path of the offending field. */
  public String field() {
    return field;
  }
}
