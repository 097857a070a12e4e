package io.kdra.core.cel.compat;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.ast.CelMutableExpr;
import dev.cel.common.ast.CelMutableExpr.CelMutableComprehension;
import dev.cel.common.ast.CelMutableExprConverter;
import dev.cel.common.ast.CelReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Every comprehension variable renamed to a name of its own, so that cel-java's lazy bindings see
 * the variables cel-go's do. cel-java evaluates a {@code cel.bind} value when the variable is first
 * read, in the scope of the read, not of the binding: in {@code cel.bind(x, 1, cel.bind(x, x + 1,
 * x))} the inner value's {@code x} was the inner binding itself, and the evaluation recursed until
 * the stack overflowed; in {@code cel.bind(y, x, [1].map(x, y))} {@code y} would read the loop's
 * {@code x}. cel-go scopes lexically (2 and the outer {@code x}). With no name bound twice, the
 * scope of the read and of the binding see the same variables. The new names append {@code @} and
 * the comprehension's id ({@code @} is no identifier character, so no selector can write one);
 * cel-java's marker of a binding, the loop variable {@code #unused}, stays. Hand-written: cel-java
 * has no such plan-time rewrite.
 */
public final class UniqueVariableNames {

  /** The loop variable by which cel-java recognises a cel.bind comprehension. */
  private static final String BIND_LOOP_VARIABLE = "#unused";

  private UniqueVariableNames() {}

  /** The checked AST with every comprehension variable (but cel.bind's marker) renamed. */
  public static CelAbstractSyntaxTree forRuntime(CelAbstractSyntaxTree ast) {
    CelMutableExpr root = CelMutableExprConverter.fromCelExpr(ast.getExpr());
    List<CelMutableExpr> comprehensions = new ArrayList<>();
    all(root, comprehensions::add);
    if (comprehensions.isEmpty()) {
      return ast;
    }
    // the checker's references name the variable an identifier resolves to, and the runtime goes
    // by them: each renamed identifier's reference is renamed too
    Map<Long, CelReference> references = new HashMap<>(ast.getReferenceMap());
    // outermost first: a nested comprehension still has its own names while an outer one's are
    // renamed, so the search for an outer variable stops where a nested one shadows it
    for (CelMutableExpr e : comprehensions) {
      CelMutableComprehension c = e.comprehension();
      String suffix = "@" + e.id();
      String iterVar = c.iterVar();
      String iterVar2 = c.iterVar2();
      String accuVar = c.accuVar();
      if (!iterVar.isEmpty() && !iterVar.equals(BIND_LOOP_VARIABLE)) {
        String renamed = iterVar + suffix;
        c.setIterVar(renamed);
        renameInLoop(c, iterVar, renamed, references);
      }
      if (iterVar2 != null && !iterVar2.isEmpty()) {
        String renamed = iterVar2 + suffix + ".2";
        c.setIterVar2(renamed);
        renameInLoop(c, iterVar2, renamed, references);
      }
      String renamed = accuVar + suffix + ".accu";
      c.setAccuVar(renamed);
      renameInLoop(c, accuVar, renamed, references);
      free(c.result(), accuVar, rename(renamed, references));
    }
    CelExpr rewritten = CelMutableExprConverter.fromMutableExpr(root);
    return CelAbstractSyntaxTree.newCheckedAst(
        rewritten, ast.getSource(), references, ast.getTypeMap());
  }

  /** Renames in the loop's condition and step, where every variable of the loop is in scope. */
  private static void renameInLoop(
      CelMutableComprehension c, String name, String renamed, Map<Long, CelReference> references) {
    free(c.loopCondition(), name, rename(renamed, references));
    free(c.loopStep(), name, rename(renamed, references));
  }

  private static Consumer<CelMutableExpr> rename(
      String renamed, Map<Long, CelReference> references) {
    return ident -> {
      ident.ident().setName(renamed);
      references.computeIfPresent(
          ident.id(), (id, r) -> CelReference.newBuilder().setName(renamed).build());
    };
  }

  /** Every comprehension in {@code e}, outermost first. */
  private static void all(CelMutableExpr e, Consumer<CelMutableExpr> comprehension) {
    if (e.getKind() == CelExpr.ExprKind.Kind.COMPREHENSION) {
      comprehension.accept(e);
    }
    children(e, child -> all(child, comprehension));
  }

  /** The identifiers in {@code e} that name the variable {@code name} of the scope around it. */
  private static void free(CelMutableExpr e, String name, Consumer<CelMutableExpr> found) {
    switch (e.getKind()) {
      case IDENT -> {
        if (e.ident().name().equals(name)) {
          found.accept(e);
        }
      }
      case COMPREHENSION -> {
        CelMutableComprehension c = e.comprehension();
        free(c.iterRange(), name, found);
        free(c.accuInit(), name, found);
        boolean loopShadows =
            name.equals(c.iterVar()) || name.equals(c.iterVar2()) || name.equals(c.accuVar());
        if (!loopShadows) {
          free(c.loopCondition(), name, found);
          free(c.loopStep(), name, found);
        }
        if (!name.equals(c.accuVar())) {
          free(c.result(), name, found);
        }
      }
      default -> children(e, child -> free(child, name, found));
    }
  }

  private static void children(CelMutableExpr e, Consumer<CelMutableExpr> child) {
    switch (e.getKind()) {
      case SELECT -> child.accept(e.select().operand());
      case CALL -> {
        e.call().target().ifPresent(child);
        e.call().args().forEach(child);
      }
      case LIST -> e.list().elements().forEach(child);
      case MAP ->
          e.map()
              .entries()
              .forEach(
                  entry -> {
                    child.accept(entry.key());
                    child.accept(entry.value());
                  });
      case STRUCT -> e.struct().entries().forEach(entry -> child.accept(entry.value()));
      case COMPREHENSION -> {
        CelMutableComprehension c = e.comprehension();
        child.accept(c.iterRange());
        child.accept(c.accuInit());
        child.accept(c.loopCondition());
        child.accept(c.loopStep());
        child.accept(c.result());
      }
      default -> {}
    }
  }
}
