package io.kdra.core.cel;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import com.google.common.primitives.UnsignedLong;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelIssue;
import dev.cel.common.CelOptions;
import dev.cel.common.CelSource;
import dev.cel.common.CelValidationException;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.navigation.CelNavigableExpr;
import dev.cel.common.types.CelKind;
import dev.cel.common.types.CelType;
import dev.cel.common.types.CelTypeProvider;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.StructType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.extensions.CelExtensions;
import dev.cel.extensions.CelListsExtensions;
import dev.cel.extensions.CelStringExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import dev.cel.runtime.CelStandardFunctions;
import dev.cel.runtime.RuntimeEquality;
import dev.cel.runtime.RuntimeHelpers;
import dev.cel.runtime.standard.InOperator.InOverload;
import io.kdra.core.cel.CelSelectorException.Kind;
import io.kdra.core.cel.CelSelectorException.Position;
import io.kdra.core.cel.compat.CelValues;
import io.kdra.core.cel.compat.EmptyListMembership;
import io.kdra.core.cel.compat.GoTimeFunctions;
import io.kdra.core.cel.compat.StandardFunctionsInUpstreamOrder;
import io.kdra.core.cel.compat.TypedOverloads;
import io.kdra.core.cel.compat.UniqueVariableNames;
import io.kdra.core.cel.cost.CelCostEstimator;
import io.kdra.core.cel.cost.CostPlan;
import io.kdra.core.cel.ext.ListsRangeLibrary;
import io.kdra.core.cel.ext.OptionalMacrosLibrary;
import io.kdra.core.cel.ext.OptionalUnwrapOptLibrary;
import io.kdra.core.cel.ext.SortByLibrary;
import io.kdra.core.cel.ext.StringFormatLibrary;
import io.kdra.core.cel.ext.StringIndexLibrary;
import io.kdra.core.cel.golang.GoFloat;
import io.kdra.core.cel.golang.GoParseFloat;
import io.kdra.core.cel.k8slib.DeviceFields;
import io.kdra.core.cel.k8slib.KubernetesCelLibrary;
import io.kdra.core.cel.k8slib.KubernetesFormatLibrary;
import io.kdra.core.cel.k8slib.KubernetesListsLibrary;
import io.kdra.core.cel.k8slib.KubernetesNetLibrary;
import io.kdra.core.cel.k8slib.KubernetesRegexLibrary;
import io.kdra.core.cel.k8slib.KubernetesUrlLibrary;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntPredicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The CEL environment of DRA device selectors ({@code DeviceClass.spec.selectors}, {@code
 * requests[].exactly.selectors}): one variable {@code device} of type {@code kubernetes.DRADevice},
 * standard CEL with macros, the Kubernetes {@code quantity} and {@code semver} libraries, and the
 * strings, sets, lists, bindings ({@code cel.bind}) and two-variable comprehension extensions.
 *
 * <p>Compiled selectors are cached by expression text (Caffeine: bounded, rarely used out first,
 * one compilation per expression however many threads ask). Thread-safe. Two entry points mirror
 * upstream: {@link #validate} applies the limits for new expressions (length, estimated cost),
 * {@link #compile} is what the allocator uses for stored ones and only rejects what cannot run; the
 * actual cost is then enforced during evaluation.
 */
public final class DeviceSelectorEnvironment {

  /** {@code CELSelectorExpressionMaxLength}. */
  public static final int MAX_EXPRESSION_LENGTH = 10 * 1024;

  /** {@code CELSelectorExpressionMaxCost}: per expression, estimated and at runtime. */
  public static final long MAX_COST = 1_000_000;

  private static final int DEFAULT_CACHE_SIZE = 4096;
  private static final Set<String> STRING_ORDER =
      Set.of("LESS_STRING", "LESS_EQUALS_STRING", "GREATER_STRING", "GREATER_EQUALS_STRING");
  private static final Set<String> EQUALITY = Set.of("EQUALS", "NOT_EQUALS");
  private static final Pattern DOUBLE_ORDER =
      Pattern.compile(
          "(LESS|LESS_EQUALS|GREATER|GREATER_EQUALS)_(DOUBLE|DOUBLE_INT64|DOUBLE_UINT64|INT64_DOUBLE"
              + "|UINT64_DOUBLE)");

  private final CelCompiler compiler;
  private final CelCompiler literalCompiler;
  private final CelRuntime runtime;
  private final CelCostEstimator costEstimator;
  private final Cache<String, CompiledSelector> cache;
  private final long maxCost;

  private DeviceSelectorEnvironment(boolean consumableCapacity, int cacheSize, long maxCost) {
    CelOptions options =
        CelOptions.current()
            .enableHeterogeneousNumericComparisons(true)
            .enableOptionalSyntax(true)
            // cel-go builds a map literal with a repeated key (the last value wins)
            .errorOnDuplicateMapKeys(false)
            .maxExpressionCodePointSize(MAX_EXPRESSION_LENGTH)
            .build();
    KubernetesCelLibrary kubernetes = new KubernetesCelLibrary();
    KubernetesListsLibrary kubernetesLists = new KubernetesListsLibrary();
    KubernetesRegexLibrary regex = new KubernetesRegexLibrary();
    KubernetesNetLibrary net = new KubernetesNetLibrary();
    KubernetesUrlLibrary urls = new KubernetesUrlLibrary();
    StringFormatLibrary format = new StringFormatLibrary();
    KubernetesFormatLibrary namedFormats = new KubernetesFormatLibrary();
    OptionalUnwrapOptLibrary unwrapOpt = new OptionalUnwrapOptLibrary();
    SortByLibrary sortBy = new SortByLibrary();
    // cel-go's lists extension at version 3; sort and sortBy hand-written (SortByLibrary),
    // range too (ListsRangeLibrary)
    CelListsExtensions lists =
        CelExtensions.lists(
            EnumSet.complementOf(
                EnumSet.of(
                    CelListsExtensions.Function.SORT,
                    CelListsExtensions.Function.SORT_BY,
                    CelListsExtensions.Function.RANGE)));
    ListsRangeLibrary listsRange = new ListsRangeLibrary();
    // cel-go's strings extension at version 2: everything but reverse (version 3); format is
    // hand-written (StringFormatLibrary) since cel-java's has none.
    // indexOf/lastIndexOf hand-written too (StringIndexLibrary): cel-java's fail on offsets
    // past the end where cel-go answers -1
    CelStringExtensions strings =
        CelExtensions.strings(
            EnumSet.complementOf(
                EnumSet.of(
                    CelStringExtensions.Function.REVERSE,
                    CelStringExtensions.Function.INDEX_OF,
                    CelStringExtensions.Function.LAST_INDEX_OF)));
    StringIndexLibrary stringIndex = new StringIndexLibrary();
    // one set of standard declarations, in upstream's overload order, for both compilers
    var standardIdentifiers = StandardFunctionsInUpstreamOrder.identifiersOnly();
    var standardFunctions = StandardFunctionsInUpstreamOrder.functions(options);
    this.compiler =
        CelCompilerFactory.standardCelCompilerBuilder()
            .setOptions(options)
            .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
            .setTypeProvider(new DeviceTypeProvider(deviceType(consumableCapacity)))
            // the standard functions in upstream's overload order, in the libraries' scope
            .setStandardEnvironmentEnabled(false)
            .setStandardDeclarations(standardIdentifiers)
            .addFunctionDeclarations(standardFunctions)
            .addVar(DeviceFields.VARIABLE, deviceType(consumableCapacity))
            // no expected result type: cel-java would bind a free type parameter of the result
            // (e.g. of [][0]) to it; upstream checks the inferred type after compiling (below)
            // stringIndex before kubernetesLists: indexOf and lastIndexOf try the string
            // overloads first, as upstream since 1.37 (its lists library comes later there)
            .addLibraries(
                kubernetes,
                stringIndex,
                kubernetesLists,
                regex,
                net,
                urls,
                format,
                namedFormats,
                strings,
                CelExtensions.optional(),
                new OptionalMacrosLibrary(),
                unwrapOpt,
                CelExtensions.bindings(),
                CelExtensions.sets(options),
                lists,
                listsRange,
                sortBy,
                CelExtensions.comprehensions())
            .build();
    this.literalCompiler =
        CelCompilerFactory.standardCelCompilerBuilder()
            .setOptions(options)
            .setStandardEnvironmentEnabled(false)
            .setStandardDeclarations(standardIdentifiers)
            .addFunctionDeclarations(standardFunctions)
            .build();
    RuntimeEquality equality = RuntimeEquality.create(RuntimeHelpers.create(), options);
    this.runtime =
        CelRuntimeFactory.standardCelRuntimeBuilder()
            .setOptions(options)
            // `in` on device.attributes must see only real domains while indexing yields an empty
            // map for unknown ones, so the standard map membership is replaced (see DomainMap).
            .setStandardEnvironmentEnabled(false)
            .setStandardFunctions(
                CelStandardFunctions.newBuilder()
                    .filterFunctions(
                        (function, overload) ->
                            overload != InOverload.IN_MAP
                                && !(overload instanceof Enum<?> e
                                    && (STRING_ORDER.contains(e.name())
                                        || EQUALITY.contains(e.name())
                                        || e.name().equals("STRING_TO_DOUBLE")
                                        || e.name().equals("DOUBLE_TO_STRING")
                                        || e.name().equals("MODULO_INT64")
                                        || GoTimeFunctions.REPLACED.contains(e.name())
                                        || DOUBLE_ORDER.matcher(e.name()).matches())))
                    .build())
            // int(duration), which cel-java's standard library lacks
            .addFunctionBindings(StandardFunctionsInUpstreamOrder.conversionBindings())
            // durations and timestamps as Go's: its parsers, ranges and checked arithmetic
            .addFunctionBindings(GoTimeFunctions.bindings())
            // cel-go: ordering a NaN is an error ("NaN values cannot be ordered"), not false
            .addFunctionBindings(doubleOrderBindings())
            // double(string) is Go's strconv.ParseFloat upstream
            .addFunctionBindings(
                CelFunctionBinding.from(
                    "string_to_double",
                    String.class,
                    text ->
                        GoParseFloat.parse(text)
                            .orElseThrow(
                                () ->
                                    new CelEvaluationException(
                                        "type conversion error from 'string' to 'double'"))))
            // cel-go's moduloInt64Checked: MinInt64 % -1 overflows (Java answers 0)
            .addFunctionBindings(
                CelFunctionBinding.from(
                    "modulo_int64",
                    Long.class,
                    Long.class,
                    (x, y) -> {
                      if (y == 0) {
                        throw new CelEvaluationException("modulus by zero");
                      }
                      if (x == Long.MIN_VALUE && y == -1) {
                        throw new CelEvaluationException("integer overflow");
                      }
                      return x % y;
                    }))
            // string(double) is Go's %g upstream: "3", "-0", "1e+21" (Java: "3.0", "-0.0",
            // "1.0E21")
            .addFunctionBindings(
                CelFunctionBinding.from("double_to_string", Double.class, GoFloat::shortest))
            .addFunctionBindings(
                CelFunctionBinding.from(
                    "in_map", Object.class, Map.class, (key, map) -> map.containsKey(key)))
            // equality as upstream's values answer it (quantities, see KubernetesCelLibrary.equal)
            .addFunctionBindings(
                CelFunctionBinding.from(
                    "equals",
                    Object.class,
                    Object.class,
                    (a, b) -> KubernetesCelLibrary.equal(a, b, equality)),
                CelFunctionBinding.from(
                    "not_equals",
                    Object.class,
                    Object.class,
                    (a, b) -> !KubernetesCelLibrary.equal(a, b, equality)))
            // cel-go orders strings by their UTF-8 bytes (code points), cel-java by UTF-16 units
            .addFunctionBindings(
                CelFunctionBinding.from(
                    "less_string",
                    String.class,
                    String.class,
                    (a, b) -> CelValues.compareCodePoints(a, b) < 0),
                CelFunctionBinding.from(
                    "less_equals_string",
                    String.class,
                    String.class,
                    (a, b) -> CelValues.compareCodePoints(a, b) <= 0),
                CelFunctionBinding.from(
                    "greater_string",
                    String.class,
                    String.class,
                    (a, b) -> CelValues.compareCodePoints(a, b) > 0),
                CelFunctionBinding.from(
                    "greater_equals_string",
                    String.class,
                    String.class,
                    (a, b) -> CelValues.compareCodePoints(a, b) >= 0))
            .addLibraries(
                kubernetes,
                kubernetesLists,
                regex,
                net,
                urls,
                format,
                namedFormats,
                strings,
                stringIndex,
                CelExtensions.optional(),
                unwrapOpt,
                CelExtensions.sets(options),
                lists,
                listsRange,
                sortBy,
                CelExtensions.comprehensions())
            .build();
    this.costEstimator = new CelCostEstimator();
    this.cache = Caffeine.newBuilder().maximumSize(cacheSize).build();
    this.maxCost = maxCost;
  }

  /** The compiler, for tests that look at its declarations. */
  CelCompiler compiler() {
    return compiler;
  }

  /** {@code <}, {@code <=}, {@code >}, {@code >=} with a double on a side: a NaN fails. */
  private static List<CelFunctionBinding> doubleOrderBindings() {
    Map<String, IntPredicate> ops =
        Map.of(
            "less",
            c -> c < 0,
            "less_equals",
            c -> c <= 0,
            "greater",
            c -> c > 0,
            "greater_equals",
            c -> c >= 0);
    Map<String, Class<?>> types =
        Map.of("double", Double.class, "int64", Long.class, "uint64", UnsignedLong.class);
    List<String> pairs =
        List.of("double_double", "double_int64", "double_uint64", "int64_double", "uint64_double");
    List<CelFunctionBinding> bindings = new ArrayList<>();
    ops.forEach(
        (op, test) ->
            pairs.forEach(
                pair -> {
                  String[] t = pair.split("_");
                  String id = op + "_" + (pair.equals("double_double") ? "double" : pair);
                  bindings.add(bind(id, types.get(t[0]), types.get(t[1]), test));
                }));
    return bindings;
  }

  private static <A, B> CelFunctionBinding bind(
      String id, Class<A> a, Class<B> b, IntPredicate test) {
    return CelFunctionBinding.from(id, a, b, (x, y) -> test.test(CelValues.orderedCompare(x, y)));
  }

  /** The environment with upstream 1.36 defaults ({@code allowMultipleAllocations} declared). */
  public static DeviceSelectorEnvironment create() {
    return create(true);
  }

  /**
   * @param consumableCapacity whether {@code device.allowMultipleAllocations} is declared, as with
   *     upstream's {@code DRAConsumableCapacity} feature
   */
  public static DeviceSelectorEnvironment create(boolean consumableCapacity) {
    return new DeviceSelectorEnvironment(consumableCapacity, DEFAULT_CACHE_SIZE, MAX_COST);
  }

  /** For tests: a lower runtime cost limit than upstream's. */
  static DeviceSelectorEnvironment withMaxCost(long maxCost) {
    return new DeviceSelectorEnvironment(true, DEFAULT_CACHE_SIZE, maxCost);
  }

  static StructType deviceType(boolean consumableCapacity) {
    // attribute values are dyn, as upstream's stored-expressions environment declares them since
    // 1.37 (any before): format() checks them at runtime, and a dyn result is accepted
    CelType attributes =
        MapType.create(SimpleType.STRING, MapType.create(SimpleType.STRING, SimpleType.DYN));
    CelType capacity =
        MapType.create(
            SimpleType.STRING, MapType.create(SimpleType.STRING, KubernetesCelLibrary.QUANTITY));
    Map<String, CelType> fields = new LinkedHashMap<>();
    fields.put(DeviceFields.DRIVER, SimpleType.STRING);
    fields.put(DeviceFields.ATTRIBUTES, attributes);
    fields.put(DeviceFields.CAPACITY, capacity);
    if (consumableCapacity) {
      fields.put(DeviceFields.ALLOW_MULTIPLE_ALLOCATIONS, SimpleType.BOOL);
    }
    return StructType.create(
        DeviceFields.TYPE,
        ImmutableSet.copyOf(fields.keySet()),
        name -> Optional.ofNullable(fields.get(name)));
  }

  /**
   * Compiles (or returns the cached program for) a stored selector, as the allocator does.
   *
   * @throws CelSelectorException of kind COMPILE with position and reason
   */
  public CompiledSelector compile(String expression) {
    return cached(expression, () -> doCompile(expression, false));
  }

  /**
   * Compiles (or returns the cached program for) a derived attribute's expression (1.37 alpha
   * {@code derivedAttributes}), as the allocator does: it must evaluate to a bool, int, string or
   * semver, a list of those, or a type known only at runtime. Evaluate it with {@link
   * CompiledSelector#value}.
   *
   * @throws CelSelectorException of kind COMPILE with position and reason
   */
  public CompiledSelector compileDerived(String expression) {
    return cached(DERIVED_KEY + expression, () -> doCompile(expression, true));
  }

  /**
   * The cached program, or the one compiled now; threads asking for one key at once wait for one
   * compilation. A compile error is thrown to every asker and not cached (as upstream's cache).
   */
  private CompiledSelector cached(String key, Supplier<CompiledSelector> compile) {
    return cache.get(key, k -> compile.get());
  }

  /** Prefix of derived expressions' cache keys (upstream keeps them apart from selectors, too). */
  private static final String DERIVED_KEY = "\u0000derived:";

  /**
   * Checks a new or changed selector as API validation does: length, compile errors and the
   * estimated worst-case cost.
   *
   * @return the problem, or empty when the expression is acceptable
   */
  public Optional<CelSelectorException> validate(String expression) {
    if (expression.length() > MAX_EXPRESSION_LENGTH) {
      return Optional.of(
          new CelSelectorException(
              Kind.TOO_LONG,
              expression,
              null,
              "must be at most "
                  + MAX_EXPRESSION_LENGTH
                  + " characters, is "
                  + expression.length()));
    }
    try {
      CompiledSelector compiled = compile(expression);
      if (compiled.exceedsCostLimit()) {
        return Optional.of(
            new CelSelectorException(
                Kind.COST_LIMIT,
                expression,
                null,
                "estimated worst-case cost "
                    + Long.toUnsignedString(compiled.estimatedCost())
                    + " exceeds the limit of "
                    + maxCost
                    + "; reduce nested loops or the size of literal lists"));
      }
      return Optional.empty();
    } catch (CelSelectorException e) {
      return Optional.of(e);
    }
  }

  private CompiledSelector doCompile(String expression, boolean derived) {
    CelAbstractSyntaxTree ast;
    try {
      ast = compiler.compile(expression).getAst();
    } catch (CelValidationException e) {
      throw compileError(expression, e.getErrors());
    }
    CelKind resultKind = ast.getResultType().kind();
    if (derived) {
      CelType t = ast.getResultType();
      boolean allowed =
          derivedScalar(t)
              || (t.kind() == CelKind.LIST
                  && t.parameters().size() == 1
                  && derivedScalar(t.parameters().get(0)));
      if (!allowed) {
        throw new CelSelectorException(
            Kind.COMPILE,
            expression,
            null,
            "must evaluate to a primitive scalar (string, integer, boolean, semver) or a list of"
                + " these scalars, not "
                + SelectorAstValidator.typeName(t));
      }
    } else if (resultKind != CelKind.BOOL
        && resultKind != CelKind.DYN
        && resultKind != CelKind.TYPE_PARAM) {
      // upstream accepts bool or the type of attribute values (dyn); a free type parameter is
      // dyn there
      throw new CelSelectorException(
          Kind.COMPILE,
          expression,
          null,
          "must evaluate to bool or the unknown type, not "
              + SelectorAstValidator.typeName(ast.getResultType()));
    }
    Optional<SelectorAstValidator.Issue> issue =
        SelectorAstValidator.validate(ast, this::literalCallSucceeds);
    if (issue.isPresent()) {
      throw new CelSelectorException(
          Kind.COMPILE, expression, position(ast, issue.get().exprId()), issue.get().message());
    }
    long estimate = costEstimator.estimate(ast);
    try {
      CelAbstractSyntaxTree runnable =
          TypedOverloads.forRuntime(
              EmptyListMembership.forRuntime(UniqueVariableNames.forRuntime(ast)));
      return new CompiledSelector(
          expression,
          runtime.createProgram(runnable),
          estimate,
          maxCost,
          callsAny(ast.getExpr(), QUANTITY_MUTATORS),
          CostPlan.of(runnable, ast));
    } catch (CelEvaluationException e) {
      throw new CelSelectorException(Kind.COMPILE, expression, null, e.getMessage());
    }
  }

  /** Upstream's isAllowedDerivedAttributeElementType (a free type parameter is dyn there). */
  private static boolean derivedScalar(CelType t) {
    return switch (t.kind()) {
      case BOOL, INT, STRING, ANY, DYN, TYPE_PARAM -> true;
      default -> t.equals(KubernetesCelLibrary.SEMVER);
    };
  }

  /** Quantity functions that change their receiver in place upstream (see GoQuantity). */
  private static final Set<String> QUANTITY_MUTATORS =
      Set.of("compareTo", "isGreaterThan", "isLessThan");

  private static boolean callsAny(CelExpr root, Set<String> functions) {
    return CelNavigableExpr.fromExpr(root)
        .allNodes()
        .anyMatch(
            n ->
                n.expr().getKind() == CelExpr.ExprKind.Kind.CALL
                    && functions.contains(n.expr().call().function()));
  }

  /** cel-go's literal validators: evaluates e.g. {@code duration("1x")} on its own. */
  private boolean literalCallSucceeds(CelExpr call) {
    try {
      CelAbstractSyntaxTree checked =
          literalCompiler
              .check(CelAbstractSyntaxTree.newParsedAst(call, CelSource.newBuilder().build()))
              .getAst();
      runtime.createProgram(checked).eval();
      return true;
    } catch (CelValidationException | CelEvaluationException | RuntimeException e) {
      return false;
    }
  }

  private static Position position(CelAbstractSyntaxTree ast, long exprId) {
    return ast.getSource().getPositionsMap().containsKey(exprId)
        ? ast.getSource()
            .getOffsetLocation(ast.getSource().getPositionsMap().get(exprId))
            .map(l -> new Position(l.getLine(), l.getColumn() + 1))
            .orElse(null)
        : null;
  }

  private static CelSelectorException compileError(String expression, Collection<CelIssue> issues) {
    CelIssue first = issues.iterator().next();
    int line = first.getSourceLocation().getLine();
    Position position =
        line > 0 ? new Position(line, first.getSourceLocation().getColumn() + 1) : null;
    String reason = friendly(first.getMessage());
    if (issues.size() > 1) {
      reason += " (and " + (issues.size() - 1) + " more)";
    }
    return new CelSelectorException(Kind.COMPILE, expression, position, reason);
  }

  /** Rewords the checker's messages that users of selectors meet most. */
  private static String friendly(String message) {
    if (message.startsWith("mismatched input")
        || message.startsWith("extraneous input")
        || message.startsWith("no viable alternative")
        || message.startsWith("token recognition")) {
      return "Syntax error: " + message;
    }
    if (message.contains("undefined field")) {
      return message
          + "; the device has driver, attributes, capacity and "
          + "allowMultipleAllocations";
    }
    return message;
  }

  /** Number of cached programs; for tests and metrics. */
  public int cachedPrograms() {
    cache.cleanUp();
    return (int) cache.estimatedSize();
  }

  private static final class DeviceTypeProvider implements CelTypeProvider {
    private final StructType deviceType;

    DeviceTypeProvider(StructType deviceType) {
      this.deviceType = deviceType;
    }

    @Override
    public ImmutableList<CelType> types() {
      return ImmutableList.of(deviceType);
    }

    @Override
    public Optional<CelType> findType(String typeName) {
      return DeviceFields.TYPE.equals(typeName) ? Optional.of(deviceType) : Optional.empty();
    }
  }
}
