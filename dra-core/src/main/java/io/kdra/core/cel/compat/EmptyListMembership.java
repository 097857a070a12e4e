package io.kdra.core.cel.compat;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.ast.CelMutableExpr;
import dev.cel.common.ast.CelMutableExprConverter;
import dev.cel.common.ast.CelReference;
import dev.cel.common.navigation.CelNavigableMutableExpr;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * cel-go's planner with {@code OptOptimize} (the API server's base environment enables it) turns
 * {@code x in []} into the constant false without evaluating {@code x} ({@code
 * interpreter.maybeOptimizeSetMembership}), so a missing attribute on the left is false there, not
 * an error. Its set lookup for non-empty constant lists propagates errors as the plain {@code in}
 * does, so only the empty list literal needs this. Hand-written: cel-java has no such plan-time
 * rewrite.
 */
public final class EmptyListMembership {

  private static final String IN_LIST = "in_list";

  private EmptyListMembership() {}

  /** The checked AST with every {@code x in []} (list overload) replaced by false. */
  public static CelAbstractSyntaxTree forRuntime(CelAbstractSyntaxTree ast) {
    Map<Long, CelReference> references = ast.getReferenceMap();
    CelMutableExpr root = CelMutableExprConverter.fromCelExpr(ast.getExpr());
    List<CelMutableExpr> found =
        CelNavigableMutableExpr.fromExpr(root)
            .allNodes()
            .map(CelNavigableMutableExpr::expr)
            .filter(e -> isEmptyListMembership(e, references.get(e.id())))
            .toList();
    if (found.isEmpty()) {
      return ast;
    }
    Map<Long, CelReference> remaining = new HashMap<>(references);
    for (CelMutableExpr e : found) {
      e.setConstant(CelConstant.ofValue(false));
      remaining.remove(e.id());
    }
    CelExpr rewritten = CelMutableExprConverter.fromMutableExpr(root);
    return CelAbstractSyntaxTree.newCheckedAst(
        rewritten, ast.getSource(), remaining, ast.getTypeMap());
  }

  private static boolean isEmptyListMembership(CelMutableExpr e, CelReference reference) {
    if (e.getKind() != CelExpr.ExprKind.Kind.CALL
        || reference == null
        || !reference.overloadIds().equals(List.of(IN_LIST))) {
      return false;
    }
    List<CelMutableExpr> args = e.call().args();
    return args.size() == 2
        && args.get(1).getKind() == CelExpr.ExprKind.Kind.LIST
        && args.get(1).list().elements().isEmpty();
  }
}
