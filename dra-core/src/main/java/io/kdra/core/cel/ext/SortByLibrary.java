package io.kdra.core.cel.ext;

import com.google.common.collect.ImmutableList;
import com.google.common.primitives.UnsignedLong;
import com.google.protobuf.ByteString;
import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.types.ListType;
import dev.cel.common.types.TypeParamType;
import dev.cel.common.values.CelByteString;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.parser.CelMacro;
import dev.cel.parser.CelMacroExprFactory;
import dev.cel.parser.CelParserBuilder;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import io.kdra.core.cel.compat.CelValues;
import io.kdra.core.cel.compat.TypedOverloads;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * {@code list.sort()} and {@code list.sortBy(x, key)} of cel-go's lists extension: the list sorted
 * (stably) by the key computed for each element, keys of one comparable type. Hand-written because
 * cel-java's {@code sortBy} types its result as a list of lists ({@code [3, 1].sortBy(x, -x) == [1,
 * 3]} does not compile there), and its sort() orders strings by UTF-16 units where cel-go orders
 * them by code points. The macro expands to {@code cel.bind(in, list,
 * in.@sortByAssociatedKeys(in.map(x, key)))}, as cel-go's does.
 */
public final class SortByLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  public static final String FUNCTION = "@sortByAssociatedKeys";
  private static final String INPUT = "@__sortBy_input__";
  private static final TypeParamType T = TypeParamType.create("T");
  private static final TypeParamType K = TypeParamType.create("K");
  private static final String RUNTIME_SORT = "list_sort";
  private static final String RUNTIME_SORT_BY = "list_sortByAssociatedKeys";

  @Override
  public void setParserOptions(CelParserBuilder parser) {
    parser.addMacros(CelMacro.newReceiverMacro("sortBy", 2, SortByLibrary::expand));
  }

  private static Optional<CelExpr> expand(
      CelMacroExprFactory f, CelExpr target, ImmutableList<CelExpr> args) {
    CelExpr variable = args.get(0);
    if (variable.exprKind().getKind() != CelExpr.ExprKind.Kind.IDENT) {
      return Optional.of(
          f.reportError("sortBy(var, ...) variable name must be a simple " + "identifier"));
    }
    // cel.bind(@__sortBy_input__, target,
    //     @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(x, key))),
    // cel-go's expansion exactly: the cost estimate depends on its shape
    String accu = f.getAccumulatorVarName();
    CelExpr keys =
        f.fold(
            variable.ident().name(),
            f.newIdentifier(INPUT),
            accu,
            f.newList(),
            f.newBoolLiteral(true),
            f.newGlobalCall("_+_", f.newIdentifier(accu), f.newList(args.get(1))),
            f.newIdentifier(accu));
    CelExpr sorted = f.newReceiverCall(FUNCTION, f.newIdentifier(INPUT), keys);
    return Optional.of(
        f.fold(
            "#unused",
            f.newList(),
            INPUT,
            target,
            f.newBoolLiteral(false),
            f.newIdentifier(INPUT),
            sorted));
  }

  /**
   * sort() and {@code @sortByAssociatedKeys} with cel-go's overloads, one per comparable (key)
   * type: the checker then types the result as cel-go's does (dyn for a list of dyn), which the
   * rest of the expression's typing and its cost estimate depend on.
   */
  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(
        CelFunctionDecl.newFunctionDeclaration(
            FUNCTION,
            TypedOverloads.declare(
                TypedOverloads.EXT_COMPARABLE,
                t -> "list_" + t + "_sortByAssociatedKeys",
                k ->
                    CelOverloadDecl.newMemberOverload(
                        "", ListType.create(T), ListType.create(T), ListType.create(k)),
                RUNTIME_SORT_BY)),
        CelFunctionDecl.newFunctionDeclaration(
            "sort",
            TypedOverloads.declare(
                TypedOverloads.EXT_COMPARABLE,
                t -> "list_" + t + "_sort",
                t -> CelOverloadDecl.newMemberOverload("", ListType.create(t), ListType.create(t)),
                RUNTIME_SORT)));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    List<CelFunctionBinding> bindings = new ArrayList<>();
    bindings.add(
        CelFunctionBinding.from(
            RUNTIME_SORT_BY, List.class, List.class, SortByLibrary::sortByKeys));
    bindings.add(CelFunctionBinding.from(RUNTIME_SORT, List.class, list -> sortByKeys(list, list)));
    runtime.addFunctionBindings(bindings);
  }

  /** cel-go's type of a comparable value, null for others. */
  private static String comparableType(Object v) {
    if (v instanceof Long) {
      return "int";
    }
    if (v instanceof UnsignedLong) {
      return "uint";
    }
    if (v instanceof Double) {
      return "double";
    }
    if (v instanceof Boolean) {
      return "bool";
    }
    if (v instanceof String) {
      return "string";
    }
    if (v instanceof ByteString || v instanceof CelByteString) {
      return "bytes";
    }
    if (v instanceof Duration || v instanceof java.time.Duration) {
      return "duration";
    }
    if (v instanceof Timestamp || v instanceof Instant) {
      return "timestamp";
    }
    return null;
  }

  /**
   * cel-go's {@code sortListByAssociatedKeys}: keys of one comparable type (an error otherwise, as
   * soon as two keys are compared), strings by code points.
   */
  static List<Object> sortByKeys(List<?> values, List<?> keys) throws CelEvaluationException {
    if (values.size() != keys.size()) {
      throw new CelEvaluationException(
          "@sortByAssociatedKeys() expected a list of the same size "
              + "as the associated keys list, but got "
              + values.size()
              + " and "
              + keys.size()
              + " elements respectively.");
    }
    if (keys.isEmpty()) {
      return new ArrayList<>(values);
    }
    String type = comparableType(keys.get(0));
    if (type == null) {
      throw new CelEvaluationException("list elements must be comparable");
    }
    for (Object key : keys) {
      if (keys.size() > 1 && !type.equals(comparableType(key))) {
        throw new CelEvaluationException("list elements must have the same type");
      }
    }
    Integer[] order = new Integer[values.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Comparator<Integer> byKey =
        (a, b) -> {
          try {
            return CelValues.compare(keys.get(a), keys.get(b));
          } catch (CelEvaluationException e) {
            throw new IllegalStateException(e);
          }
        };
    if (order.length <= 12) {
      // Go's sort.Slice on short lists: an insertion sort (also where NaN keys compare as
      // neither less nor greater, which is no total order)
      for (int i = 1; i < order.length; i++) {
        for (int k = i; k > 0 && byKey.compare(order[k], order[k - 1]) < 0; k--) {
          Integer t = order[k];
          order[k] = order[k - 1];
          order[k - 1] = t;
        }
      }
    } else {
      Arrays.sort(order, byKey);
    }
    List<Object> sorted = new ArrayList<>(values.size());
    for (Integer i : order) {
      sorted.add(values.get(i));
    }
    return sorted;
  }
}
