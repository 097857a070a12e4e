package io.kdra.core.alloc;

/** A selector could not be evaluated; names the expression and says why. */
public class SelectorException extends RuntimeException {

  private final String expression;

  public SelectorException(String expression, String message, Throwable cause) {
    super(message, cause);
    this.expression = expression;
  }

  /** The expression that failed. */
  public String expression() {
    return expression;
  }
}
