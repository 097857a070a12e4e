package io.kdra.core.cel.ext;

import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.ListType;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import java.util.List;
import java.util.stream.LongStream;

/**
 * {@code lists.range(n)} of cel-go's lists extension as of cel-go 0.29 (Kubernetes 1.37): the list
 * {@code [0, n)}, and a runtime error for a negative size or one over a million elements.
 * cel-java's answers an empty list for a negative size and has no maximum.
 */
public final class ListsRangeLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  static final String OVERLOAD = "lists_range";

  /** cel-go's {@code defaultMaxRangeSize}. */
  static final long MAX_SIZE = 1_000_000;

  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(
        CelFunctionDecl.newFunctionDeclaration(
            "lists.range",
            CelOverloadDecl.newGlobalOverload(
                OVERLOAD, ListType.create(SimpleType.INT), SimpleType.INT)));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    runtime.addFunctionBindings(
        CelFunctionBinding.from(OVERLOAD, Long.class, ListsRangeLibrary::range));
  }

  static List<Long> range(long n) throws CelEvaluationException {
    if (n < 0) {
      throw new CelEvaluationException("lists.range: size must be non-negative, got " + n);
    }
    if (n > MAX_SIZE) {
      throw new CelEvaluationException(
          "lists.range: size " + n + " exceeds maximum allowed (" + MAX_SIZE + ")");
    }
    return LongStream.range(0, n).boxed().toList();
  }
}
