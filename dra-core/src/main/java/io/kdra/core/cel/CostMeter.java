package io.kdra.core.cel;

import dev.cel.common.ast.CelExpr;
import dev.cel.runtime.CelEvaluationListener;

/**
 * Counts evaluation steps of one evaluation and stops it past the limit. Used only for
 * expressions whose estimated cost is above the limit (stored expressions that bypassed
 * validation), so that cheap selectors pay nothing for metering: the estimate, equal to
 * upstream's, bounds upstream's actual cost too. A step is one evaluated expression node, not
 * cel-go's runtime cost unit (which charges string and list sizes and nothing for constants):
 * porting cel-go's tracker would need its planned program's shape, which cel-java's
 * interpreter does not have, so such an expression may stop at another point than upstream's.
 */
final class CostMeter implements CelEvaluationListener {

  /** Thrown out of the interpreter to abort the evaluation. */
  static final class LimitExceeded extends RuntimeException {
    LimitExceeded() {
      super(null, null, false, false);
    }
  }

  private final long limit;
  private long steps;

  CostMeter(long limit) {
    this.limit = limit;
  }

  @Override
  public void callback(CelExpr expr, Object evaluatedResult) {
    if (++steps > limit) {
      throw new LimitExceeded();
    }
  }
}
