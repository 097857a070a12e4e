package io.kdra.core.cel.ext;

import com.google.common.collect.ImmutableList;
import dev.cel.common.ast.CelExpr;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.parser.CelMacro;
import dev.cel.parser.CelMacroExprFactory;
import dev.cel.parser.CelParserBuilder;
import java.util.Optional;

/**
 * {@code opt.optMap(x, expr)} and {@code opt.optFlatMap(x, expr)} expanded as cel-go expands them
 * ({@code cel/library.go}): {@code opt.hasValue() ? optional.of(cel.bind(x, opt.value(), expr)) :
 * optional.none()} (optFlatMap without the {@code optional.of}). cel-java's expansion binds the
 * target first and loops differently, which gives the same values but another estimated cost;
 * upstream's cost follows this shape. Replaces the macros of cel-java's optional library (added
 * after it).
 */
public final class OptionalMacrosLibrary implements CelCompilerLibrary {

  private static final String UNUSED_ITER_VAR = "#unused";

  @Override
  public void setParserOptions(CelParserBuilder parser) {
    parser.addMacros(
        CelMacro.newReceiverMacro("optMap", 2, (f, target, args) -> expand(f, target, args, true)),
        CelMacro.newReceiverMacro(
            "optFlatMap", 2, (f, target, args) -> expand(f, target, args, false)));
  }

  private static Optional<CelExpr> expand(
      CelMacroExprFactory f, CelExpr target, ImmutableList<CelExpr> args, boolean wrap) {
    CelExpr variable = args.get(0);
    String macro = wrap ? "optMap" : "optFlatMap";
    if (variable.exprKind().getKind() != CelExpr.ExprKind.Kind.IDENT) {
      return Optional.of(f.reportError(macro + "() variable name must be a simple identifier"));
    }
    String name = variable.ident().name();
    CelExpr bound =
        f.fold(
            UNUSED_ITER_VAR,
            f.newList(),
            name,
            f.newReceiverCall("value", f.copy(target)),
            f.newBoolLiteral(false),
            f.newIdentifier(name),
            args.get(1));
    return Optional.of(
        f.newGlobalCall(
            "_?_:_",
            f.newReceiverCall("hasValue", target),
            wrap ? f.newGlobalCall("optional.of", bound) : bound,
            f.newGlobalCall("optional.none")));
  }
}
