package io.kdra.core.cel.compat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOptions;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.CelValidationException;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.types.ListType;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Canaries: each cel-java bug or gap that a kdra workaround exists for, shown on plain cel-java
 * (none of kdra's libraries or rewrites). A row fails once cel-java behaves as cel-go does; then
 * the named workaround is no longer needed: delete it (and the row) after the differential corpus
 * agrees.
 */
class CelJavaCanaryTest {

  private static final CelOptions OPTIONS =
      CelOptions.current()
          .enableHeterogeneousNumericComparisons(true)
          .enableOptionalSyntax(true)
          .build();

  private static final CelCompiler COMPILER =
      CelCompilerFactory.standardCelCompilerBuilder()
          .setOptions(OPTIONS)
          .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
          .addVar("x", SimpleType.INT)
          .addVar("m", MapType.create(SimpleType.STRING, SimpleType.INT))
          .addLibraries(
              CelExtensions.strings(),
              CelExtensions.lists(),
              CelExtensions.optional(),
              CelExtensions.bindings(),
              CelExtensions.comprehensions())
          .build();

  private static final CelRuntime RUNTIME =
      CelRuntimeFactory.standardCelRuntimeBuilder()
          .setOptions(OPTIONS)
          .addLibraries(
              CelExtensions.strings(),
              CelExtensions.lists(),
              CelExtensions.optional(),
              CelExtensions.comprehensions())
          .build();

  /** What plain cel-java does with an expression. */
  sealed interface Outcome {}

  record Value(Object value) implements Outcome {}

  record CompileError() implements Outcome {}

  record EvalError() implements Outcome {}

  static Stream<Arguments> bugs() {
    return Stream.of(
        bug(
            "DeviceSelectorEnvironment's less_string... bindings, CelValues.compareCodePoints",
            "strings ordered by UTF-16 units, not code points",
            "\"\\uffff\" < \"\\U0001F600\"",
            new Value(false)),
        bug(
            "DeviceSelectorEnvironment.doubleOrderBindings, CelValues.orderedCompare",
            "ordering a NaN is false, not an error",
            "double(\"NaN\") < 1.0",
            new Value(false)),
        bug(
            "DeviceSelectorEnvironment's modulo_int64 binding",
            "MinInt64 % -1 is 0, not an overflow",
            "(-9223372036854775807 - 1) % -1",
            new Value(0L)),
        bug(
            "DeviceSelectorEnvironment's string_to_double binding (GoParseFloat)",
            "double(string) takes Java's syntax (a d suffix)",
            "double(\"1d\") == 1.0",
            new Value(true)),
        bug(
            "DeviceSelectorEnvironment's double_to_string binding (GoFloat.shortest)",
            "string(double) is Java's text, not Go's %g",
            "string(3.0)",
            new Value("3.0")),
        bug(
            "GoTimeFunctions",
            "durations follow protobuf's grammar, not Go's time.ParseDuration",
            "duration(\".5m\")",
            new EvalError()),
        bug(
            "GoTimeFunctions",
            "timestamps accept a lower-case t and z, which Go's RFC 3339 parser refuses",
            "timestamp(\"2024-01-01t10:00:00z\") == timestamp(\"2024-01-01T10:00:00Z\")",
            new Value(true)),
        bug(
            "StandardFunctionsInUpstreamOrder.conversionBindings",
            "int(duration) is not declared",
            "int(duration(\"1s\"))",
            new CompileError()),
        bug(
            "UniqueVariableNames",
            "cel.bind's value is read in the scope of its use, not of the binding",
            "cel.bind(y, x, [1].map(x, y))",
            new Value(List.of(1L))),
        bug(
            "EmptyListMembership",
            "x in [] evaluates x (cel-go's planner answers false)",
            "m.missing in []",
            new EvalError()),
        bug(
            "SelectorAstValidator (double literal out of range)",
            "a double literal beyond the double range parses",
            "1e400 > 0.0",
            new Value(true)),
        bug(
            "ext.StringIndexLibrary",
            "indexOf with an offset past the end fails instead of answering -1",
            "\"abc\".indexOf(\"c\", 5)",
            new EvalError()),
        bug(
            "ext.SortByLibrary",
            "sortBy is typed as a list of lists",
            "[3, 1].sortBy(x, -x) == [1, 3]",
            new CompileError()),
        bug(
            "ext.SortByLibrary",
            "sort() orders strings by UTF-16 units",
            "[\"\\U0001F600\", \"\\uffff\"].sort() == [\"\\U0001F600\", \"\\uffff\"]",
            new Value(true)),
        bug(
            "ext.ListsRangeLibrary",
            "lists.range of a negative size is an empty list, not an error",
            "lists.range(-1)",
            new Value(List.of())),
        bug(
            "ext.OptionalUnwrapOptLibrary",
            "the optional library has no unwrapOpt()",
            "[optional.of(1)].unwrapOpt()",
            new CompileError()),
        bug(
            "ext.StringFormatLibrary",
            "the strings extension has no format()",
            "\"%d\".format([1])",
            new CompileError()));
  }

  private static Arguments bug(String workaround, String bug, String expression, Outcome buggy) {
    return arguments(named(bug, workaround), expression, buggy);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bugs")
  void celJavaStillHasTheBug(String workaround, String expression, Outcome buggy) {
    assertThat(outcome(expression))
        .as(
            "cel-java no longer shows this bug on `%s`: remove the workaround %s",
            expression, workaround)
        .isEqualTo(buggy);
  }

  /**
   * cel-go expands {@code opt.optMap(x, e)} to {@code opt.hasValue() ? optional.of(cel.bind(x,
   * opt.value(), e)) : optional.none()}, and upstream's estimated cost follows that shape; cel-java
   * expands it to a comprehension at the root. Once cel-java's root is the conditional too, {@code
   * ext.OptionalMacrosLibrary} can go.
   */
  @Test
  void celJavaStillExpandsOptMapToAComprehension() throws CelValidationException {
    CelExpr root = COMPILER.compile("optional.of(1).optMap(y, y + 1)").getAst().getExpr();

    assertThat(root.exprKind().getKind())
        .as("cel-java now expands optMap as cel-go does: remove ext.OptionalMacrosLibrary")
        .isEqualTo(CelExpr.ExprKind.Kind.COMPREHENSION);
  }

  /**
   * cel-go keeps every overload the checker could not rule out (a list of dyn fits list(int) and
   * list(string)) and at run time takes the first whose parameter types the argument has (a list by
   * its first element). cel-java's runtime refuses such a call when the bindings all take a List,
   * so {@code TypedOverloads.forRuntime} points it at one binding. Once cel-java dispatches a list
   * of dyn holding strings to the list(string) overload, delete {@code TypedOverloads.forRuntime}
   * and its runtime ids (bind each typed overload id instead; the typed declarations stay, the
   * checker needs them).
   */
  @Test
  void celJavaStillCannotChooseAmongListOverloads() throws CelValidationException {
    CelCompiler compiler =
        CelCompilerFactory.standardCelCompilerBuilder()
            .addFunctionDeclarations(
                CelFunctionDecl.newFunctionDeclaration(
                    "f",
                    CelOverloadDecl.newMemberOverload(
                        "list_int_f", SimpleType.STRING, ListType.create(SimpleType.INT)),
                    CelOverloadDecl.newMemberOverload(
                        "list_string_f", SimpleType.STRING, ListType.create(SimpleType.STRING))))
            .build();
    CelRuntime runtime =
        CelRuntimeFactory.standardCelRuntimeBuilder()
            .addFunctionBindings(
                CelFunctionBinding.from("list_int_f", List.class, list -> "int"),
                CelFunctionBinding.from("list_string_f", List.class, list -> "string"))
            .build();
    CelAbstractSyntaxTree typed = compiler.compile("[\"a\"].f()").getAst();
    CelAbstractSyntaxTree dyn = compiler.compile("dyn([\"a\"]).f()").getAst();

    assertThat(evaluate(runtime, typed))
        .as("one overload chosen by the checker")
        .isEqualTo("string");
    assertThat(dyn.getReferenceMap().values())
        .as("the checker keeps both overloads for a list of dyn")
        .anyMatch(r -> r.overloadIds().equals(List.of("list_int_f", "list_string_f")));
    assertThat(evaluate(runtime, dyn))
        .as(
            "cel-java no longer refuses a call with several List overloads: if it answers"
                + " \"string\" (cel-go's choice), remove TypedOverloads.forRuntime")
        .asString()
        .startsWith("evaluation error: Ambiguous overloads for function 'f'");
  }

  private static Object evaluate(CelRuntime runtime, CelAbstractSyntaxTree ast) {
    try {
      return runtime.createProgram(ast).eval();
    } catch (CelEvaluationException e) {
      return e.getMessage();
    }
  }

  private static Outcome outcome(String expression) {
    CelAbstractSyntaxTree ast;
    try {
      ast = COMPILER.compile(expression).getAst();
    } catch (CelValidationException e) {
      return new CompileError();
    }
    try {
      Object v = RUNTIME.createProgram(ast).eval(Map.of("x", 7L, "m", Map.of()));
      return new Value(v instanceof List<?> l ? List.copyOf(l) : v);
    } catch (CelEvaluationException e) {
      return new EvalError();
    }
  }
}
