package io.kdra.core.cel;

import com.google.common.collect.ImmutableList;
import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.types.ListType;
import dev.cel.common.types.TypeParamType;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.parser.CelMacro;
import dev.cel.parser.CelMacroExprFactory;
import dev.cel.parser.CelParserBuilder;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code list.sortBy(x, key)} of cel-go's lists extension: the list sorted (stably) by the key
 * computed for each element, keys of one comparable type. Hand-written because cel-java 0.14.0's
 * {@code sortBy} types its result as a list of lists ({@code [3, 1].sortBy(x, -x) == [1, 3]}
 * does not compile there). The macro expands to
 * {@code cel.bind(in, list, in.@sortByAssociatedKeys(in.map(x, key)))}, as cel-go's does.
 */
final class SortByLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  static final String FUNCTION = "@sortByAssociatedKeys";
  private static final String INPUT = "@__sortBy_input__";
  private static final TypeParamType T = TypeParamType.create("T");
  private static final TypeParamType K = TypeParamType.create("K");

  @Override
  public void setParserOptions(CelParserBuilder parser) {
    parser.addMacros(CelMacro.newReceiverMacro("sortBy", 2, SortByLibrary::expand));
  }

  private static Optional<CelExpr> expand(CelMacroExprFactory f, CelExpr target,
      ImmutableList<CelExpr> args) {
    CelExpr variable = args.get(0);
    if (variable.exprKind().getKind() != CelExpr.ExprKind.Kind.IDENT) {
      return Optional.of(f.reportError("sortBy(var, ...) variable name must be a simple "
          + "identifier"));
    }
    // cel.bind(@__sortBy_input__, target,
    //     @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(x, key))),
    // cel-go's expansion exactly: the cost estimate depends on its shape
    String accu = f.getAccumulatorVarName();
    CelExpr keys = f.fold(variable.ident().name(), f.newIdentifier(INPUT), accu, f.newList(),
        f.newBoolLiteral(true),
        f.newGlobalCall("_+_", f.newIdentifier(accu), f.newList(args.get(1))),
        f.newIdentifier(accu));
    CelExpr sorted = f.newReceiverCall(FUNCTION, f.newIdentifier(INPUT), keys);
    return Optional.of(f.fold("#unused", f.newList(), INPUT, target, f.newBoolLiteral(false),
        f.newIdentifier(INPUT), sorted));
  }

  /** One generic overload (see KubernetesListsLibrary); keys checked by SelectorAstValidator. */
  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(CelFunctionDecl.newFunctionDeclaration(FUNCTION,
        CelOverloadDecl.newMemberOverload("list_sortByAssociatedKeys", ListType.create(T),
            ListType.create(T), ListType.create(K))));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    runtime.addFunctionBindings(CelFunctionBinding.from("list_sortByAssociatedKeys",
        List.class, List.class, SortByLibrary::sortByKeys));
  }

  private static List<Object> sortByKeys(List<?> values, List<?> keys)
      throws CelEvaluationException {
    if (values.size() != keys.size()) {
      throw new CelEvaluationException("@sortByAssociatedKeys() expected a list of the same size "
          + "as the associated keys list, but got " + values.size() + " and " + keys.size()
          + " elements respectively.");
    }
    Integer[] order = new Integer[values.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    CelEvaluationException[] failure = new CelEvaluationException[1];
    java.util.Arrays.sort(order, (a, b) -> {
      try {
        return CelValues.compare(keys.get(a), keys.get(b));
      } catch (CelEvaluationException e) {
        failure[0] = e;
        return 0;
      }
    });
    if (failure[0] != null) {
      throw failure[0];
    }
    List<Object> sorted = new ArrayList<>(values.size());
    for (Integer i : order) {
      sorted.add(values.get(i));
    }
    return sorted;
  }
}
