package io.kdra.core.cel;

import java.util.Optional;

/**
 * A CEL device selector that cannot be compiled, is too expensive, or failed while evaluating. The
 * message names the expression, the position where known, and the reason in words a user can act
 * on. Upstream treats every such error as fatal for the allocation attempt (never as false).
 */
public class CelSelectorException extends RuntimeException {

  /** What went wrong, for callers that react differently (e.g. validation vs. allocation). */
  public enum Kind {
    /** Syntax or type error, or a result type other than bool. */
    COMPILE,
    /** Longer than the upstream limit on expression length. */
    TOO_LONG,
    /** The estimated or actual cost exceeds the upstream limit. */
    COST_LIMIT,
    /** A runtime error, e.g. a missing attribute or a non-bool result. */
    RUNTIME
  }

  private final Kind kind;
  private final String expression;
  private final String reason;
  private final transient Position position;

  /** A 1-based line and column in the expression. */
  public record Position(int line, int column) {}

  public CelSelectorException(Kind kind, String expression, Position position, String reason) {
    super(format(kind, expression, position, reason));
    this.kind = kind;
    this.expression = expression;
    this.position = position;
    this.reason = reason;
  }

  private static String format(Kind kind, String expression, Position position, String reason) {
    String what =
        switch (kind) {
          case COMPILE -> "CEL expression does not compile";
          case TOO_LONG -> "CEL expression is too long";
          case COST_LIMIT -> "CEL expression is too expensive";
          case RUNTIME -> "CEL expression failed to evaluate";
        };
    String where =
        position == null ? "" : " at line " + position.line() + ", column " + position.column();
    return what + where + ": " + reason + " (expression: " + abbreviate(expression) + ")";
  }

  private static String abbreviate(String expression) {
    String oneLine = expression.replace('\n', ' ');
    return oneLine.length() <= 200 ? oneLine : oneLine.substring(0, 197) + "...";
  }

  public Kind kind() {
    return kind;
  }

  public String expression() {
    return expression;
  }

  /** The reason alone, without expression and position. */
  public String reason() {
    return reason;
  }

  public Optional<Position> position() {
    return Optional.ofNullable(position);
  }
}
