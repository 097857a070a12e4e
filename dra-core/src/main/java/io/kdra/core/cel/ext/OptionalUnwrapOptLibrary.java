package io.kdra.core.cel.ext;

import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.ListType;
import dev.cel.common.types.OptionalType;
import dev.cel.common.types.TypeParamType;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code list.unwrapOpt()}, the member form of {@code optional.unwrap(list)} in cel-go's optional
 * library version 2, which cel-java's optional library lacks. Hand-written.
 */
public final class OptionalUnwrapOptLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  private static final TypeParamType V = TypeParamType.create("V");

  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(
        CelFunctionDecl.newFunctionDeclaration(
            "unwrapOpt",
            CelOverloadDecl.newMemberOverload(
                "optional_unwrapOpt",
                ListType.create(V),
                ListType.create(OptionalType.create(V)))));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    runtime.addFunctionBindings(
        CelFunctionBinding.from(
            "optional_unwrapOpt",
            List.class,
            list -> {
              List<Object> values = new ArrayList<>();
              for (Object o : list) {
                if (o instanceof Optional<?> opt) {
                  opt.ifPresent(values::add);
                }
              }
              return values;
            }));
  }
}
