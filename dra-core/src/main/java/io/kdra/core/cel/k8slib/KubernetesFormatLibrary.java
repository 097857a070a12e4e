package io.kdra.core.cel.k8slib;

import com.google.common.collect.ImmutableList;
import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.CelType;
import dev.cel.common.types.ListType;
import dev.cel.common.types.OpaqueType;
import dev.cel.common.types.OptionalType;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import io.kdra.core.cel.k8slib.KubernetesFormats.NamedFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Kubernetes CEL format library (k8s.io/apiserver {@code library.Format}, in the base
 * environment since 1.31): {@code format.dns1123Label()} ... (one function per named format),
 * {@code format.named(name)} (an optional format, none for an unknown name) and {@code
 * format.validate(string)} (none when valid, else the optional list of errors). The formats and
 * their messages are {@link KubernetesFormats}.
 */
public final class KubernetesFormatLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  public static final CelType FORMAT = OpaqueType.create("kubernetes.NamedFormat");

  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    List<CelFunctionDecl> decls = new ArrayList<>();
    decls.add(
        CelFunctionDecl.newFunctionDeclaration(
            "validate",
            CelOverloadDecl.newMemberOverload(
                "format-validate",
                OptionalType.create(ListType.create(SimpleType.STRING)),
                FORMAT,
                SimpleType.STRING)));
    decls.add(
        CelFunctionDecl.newFunctionDeclaration(
            "format.named",
            CelOverloadDecl.newGlobalOverload(
                "format-named", OptionalType.create(FORMAT), SimpleType.STRING)));
    for (String name : KubernetesFormats.ALL.keySet()) {
      decls.add(
          CelFunctionDecl.newFunctionDeclaration(
              "format." + name,
              CelOverloadDecl.newGlobalOverload("format." + name, FORMAT, ImmutableList.of())));
    }
    checker.addFunctionDeclarations(decls);
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    List<CelFunctionBinding> bindings = new ArrayList<>();
    bindings.add(
        CelFunctionBinding.from(
            "format-validate",
            NamedFormat.class,
            String.class,
            (format, value) -> {
              List<String> errors = format.validator().apply(value);
              return errors.isEmpty() ? Optional.empty() : Optional.of(List.copyOf(errors));
            }));
    bindings.add(
        CelFunctionBinding.from(
            "format-named",
            String.class,
            name -> Optional.ofNullable(KubernetesFormats.ALL.get(name))));
    for (Map.Entry<String, NamedFormat> format : KubernetesFormats.ALL.entrySet()) {
      bindings.add(
          CelFunctionBinding.from(
              "format." + format.getKey(), ImmutableList.of(), args -> format.getValue()));
    }
    runtime.addFunctionBindings(bindings);
  }
}
