package io.kdra.core.cel.compat;

import dev.cel.checker.CelStandardDeclarations;
import dev.cel.checker.CelStandardDeclarations.StandardFunction;
import dev.cel.checker.CelStandardDeclarations.StandardFunction.Overload.Comparison;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOptions;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.SimpleType;
import dev.cel.runtime.CelFunctionBinding;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * CEL's standard functions declared as cel-go declares them: each function's overloads in cel-go's
 * order, and in one scope with the libraries' functions.
 *
 * <p>The order is part of the typing. A checker tries a function's overloads in declaration order,
 * and where an argument's type is still free (the elements of an empty list, as in {@code
 * [].sortBy(x, -x)}) the first overload that fits binds it. cel-java declares {@code negate_int64}
 * before {@code negate_double}, cel-go the other way round, so {@code [].sortBy(x, -x)} was a list
 * of int here and a list of double upstream, and {@code [].sortBy(x, -x) == [1]} compiled here
 * only. One scope, because cel-java's view of a function declared in two scopes (the standard
 * {@code _[_]} and the optional library's, say) orders its overloads by hash.
 *
 * <p>The order is read from {@code upstream-overload-order.tsv}, the output of {@code
 * dra-alloc-upstream cel-overloads} for the pinned upstream (regenerate it on a version bump;
 * {@code CelDifferentialIT.overloadOrderIsThePinnedUpstreams} fails while it is stale). Overloads
 * upstream does not have keep their cel-java order after upstream's.
 *
 * <p>Also the standard conversion cel-java lacks: {@code int(duration)} (nanoseconds). cel-go 0.29
 * (Kubernetes 1.37) no longer declares {@code duration(int)}, so it does not compile.
 */
public final class StandardFunctionsInUpstreamOrder {

  public static final String DURATION_TO_INT = "duration_to_int64";
  private static final String RESOURCE = "upstream-overload-order.tsv";
  private static final Map<String, List<String>> UPSTREAM_ORDER = read();

  private StandardFunctionsInUpstreamOrder() {}

  /**
   * The standard library's identifiers (type names) only: its functions come from {@link
   * #functions}.
   */
  public static CelStandardDeclarations identifiersOnly() {
    return CelStandardDeclarations.newBuilder().filterFunctions((f, o) -> false).build();
  }

  /**
   * The standard functions cel-java's standard environment declares under these options (the same
   * filter as its {@code Env.standard}), each in upstream's overload order.
   */
  public static List<CelFunctionDecl> functions(CelOptions options) {
    List<CelFunctionDecl> functions = new ArrayList<>();
    for (StandardFunction function : StandardFunction.values()) {
      List<CelOverloadDecl> overloads = new ArrayList<>();
      for (CelOverloadDecl o : function.functionDecl().overloads()) {
        if (included(o.overloadId(), options)) {
          overloads.add(o);
        }
      }
      if (function.functionName().equals("int")) {
        overloads.add(
            CelOverloadDecl.newGlobalOverload(
                DURATION_TO_INT, SimpleType.INT, SimpleType.DURATION));
      }
      if (!overloads.isEmpty()) {
        functions.add(inUpstreamOrder(function.functionName(), overloads));
      }
    }
    return functions;
  }

  /** The runtime of the conversion cel-java lacks: {@code int(duration)} in nanoseconds. */
  public static List<CelFunctionBinding> conversionBindings() {
    return List.of(CelFunctionBinding.from(DURATION_TO_INT, Duration.class, Duration::toNanos));
  }

  /** The function with its overloads in upstream's order (unknown ones after, as they were). */
  static CelFunctionDecl inUpstreamOrder(String name, List<CelOverloadDecl> overloads) {
    List<String> order = UPSTREAM_ORDER.getOrDefault(name, List.of());
    List<CelOverloadDecl> sorted = new ArrayList<>(overloads);
    sorted.sort(
        Comparator.comparingInt(
            o -> {
              int i = order.indexOf(o.overloadId());
              return i < 0 ? Integer.MAX_VALUE : i;
            }));
    return CelFunctionDecl.newFunctionDeclaration(name, sorted);
  }

  /** Upstream's overload IDs of each function, in declaration order. */
  public static Map<String, List<String>> upstreamOrder() {
    return UPSTREAM_ORDER;
  }

  /** cel-java's {@code Env.standard} filter: overloads its options switch off. */
  private static boolean included(String overloadId, CelOptions options) {
    return switch (overloadId) {
      case "int64_to_int64" -> options.enableUnsignedLongs();
      case "int64_to_timestamp" -> options.enableTimestampEpoch();
      default ->
          options.enableHeterogeneousNumericComparisons()
              || !Comparison.fromOverloadId(overloadId)
                  .map(Comparison::isHeterogeneousComparison)
                  .orElse(false);
    };
  }

  private static Map<String, List<String>> read() {
    Map<String, List<String>> order = new HashMap<>();
    try (InputStream in = StandardFunctionsInUpstreamOrder.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + RESOURCE);
      }
      BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      for (String line = reader.readLine(); line != null; line = reader.readLine()) {
        int tab = line.indexOf('\t');
        if (tab > 0) {
          order.put(line.substring(0, tab), List.of(line.substring(tab + 1).split(",")));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Map.copyOf(order);
  }
}
