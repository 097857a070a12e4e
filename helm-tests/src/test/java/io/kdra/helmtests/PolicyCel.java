package io.kdra.helmtests;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelOptions;
import dev.cel.common.CelValidationException;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MatchCondition;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Validation;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Variable;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A ValidatingAdmissionPolicy's CEL compiled and run as the API server runs it, for what the
 * chart's writer policies use: match conditions, then the variables in order, then the validations,
 * with {@code object}, {@code oldObject} and {@code request} as plain maps and the strings and
 * optional libraries of Kubernetes' CEL. Not the whole admission environment (no quantity or
 * authorizer functions, no type checking against the kinds' schemas): a compile error here is one
 * the API server would report too.
 */
final class PolicyCel {

  private static final CelOptions OPTIONS = CelOptions.current().enableOptionalSyntax(true).build();

  private static final CelCompiler COMPILER =
      CelCompilerFactory.standardCelCompilerBuilder()
          .setOptions(OPTIONS)
          .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
          .addVar("object", SimpleType.DYN)
          .addVar("oldObject", SimpleType.DYN)
          .addVar("request", SimpleType.DYN)
          .addVar("variables", MapType.create(SimpleType.STRING, SimpleType.DYN))
          .addLibraries(CelExtensions.strings(), CelExtensions.optional())
          .build();

  private static final CelRuntime RUNTIME =
      CelRuntimeFactory.standardCelRuntimeBuilder()
          .setOptions(OPTIONS)
          .addLibraries(CelExtensions.strings(), CelExtensions.optional())
          .build();

  private PolicyCel() {}

  /** Compiles one expression; throws with the compiler's message when it does not compile. */
  static CelAbstractSyntaxTree compile(String expression) {
    try {
      return COMPILER.compile(expression).getAst();
    } catch (CelValidationException e) {
      throw new AssertionError("does not compile: " + expression + "\n" + e.getMessage(), e);
    }
  }

  /**
   * What the policy answers for one request: empty when it admits the request (no match condition
   * holds, or every validation passes), else the message of the first failed validation.
   */
  static Optional<String> refusal(
      ValidatingAdmissionPolicy policy,
      Map<String, Object> request,
      Map<String, Object> object,
      Map<String, Object> oldObject) {
    Map<String, Object> input = new HashMap<>();
    input.put("request", request);
    if (object != null) {
      input.put("object", object);
    }
    if (oldObject != null) {
      input.put("oldObject", oldObject);
    }
    for (MatchCondition c : policy.getSpec().getMatchConditions()) {
      if (!Boolean.TRUE.equals(eval(c.getExpression(), input))) {
        return Optional.empty();
      }
    }
    Map<String, Object> variables = new LinkedHashMap<>();
    input.put("variables", variables);
    for (Variable v : policy.getSpec().getVariables()) {
      variables.put(v.getName(), eval(v.getExpression(), input));
    }
    for (Validation v : policy.getSpec().getValidations()) {
      if (!Boolean.TRUE.equals(eval(v.getExpression(), input))) {
        return Optional.of(
            v.getMessageExpression() == null
                ? v.getMessage()
                : (String) eval(v.getMessageExpression(), input));
      }
    }
    return Optional.empty();
  }

  private static Object eval(String expression, Map<String, Object> input) {
    try {
      return RUNTIME.createProgram(compile(expression)).eval(input);
    } catch (CelEvaluationException e) {
      throw new AssertionError("fails to evaluate: " + expression + "\n" + e.getMessage(), e);
    }
  }
}
