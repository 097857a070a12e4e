package io.kdra.core.cel;

import java.util.Map;

/**
 * What the CEL port follows: the pinned upstream versions, once, and for each class the upstream
 * file it ports. A maintainer bumping cel-go or Kubernetes changes {@link #PINNED} (its test fails
 * until it equals the oracle's {@code integration-tests/upstream/go.mod} and the root pom), then
 * reads the upstream diff of each file below.
 *
 * <p>Packages: {@code cel} the environment and its API; {@code cel.k8slib} the Kubernetes CEL
 * libraries; {@code cel.ext} cel-go's extensions; {@code cel.cost} cel-go's cost model; {@code
 * cel.golang} Go's standard library and apimachinery; {@code cel.compat} what exists only because
 * cel-java differs from cel-go (each has a canary test that fails once cel-java is fixed).
 */
public final class UpstreamSources {

  /** The versions the port follows. */
  public record Versions(String celGo, String kubernetesModules, String go, String celJava) {}

  /**
   * cel-go and the k8s.io modules as the oracle's go.mod requires them, the Go release whose
   * standard library the {@code golang} ports follow, and the cel-java release the {@code compat}
   * workarounds are written against.
   */
  public static final Versions PINNED = new Versions("v0.29.2", "v0.37.2", "1.26", "0.14.0");

  private static final String CEL_GO = "github.com/google/cel-go/";
  private static final String APISERVER = "k8s.io/apiserver/pkg/cel/";
  private static final String DRA = "k8s.io/dynamic-resource-allocation/";

  /** Each class (by its name relative to this package) and the upstream file it follows. */
  public static final Map<String, String> FILES =
      Map.ofEntries(
          // the environment
          Map.entry(
              "DeviceSelectorEnvironment",
              DRA + "cel/compile.go, " + APISERVER + "environment/base.go"),
          Map.entry("CompiledSelector", DRA + "cel/compile.go (CompilationResult.DeviceMatches)"),
          Map.entry("CelDevice", DRA + "cel/compile.go (DeviceMatches' variables)"),
          Map.entry("DomainMap", DRA + "cel/compile.go (stringInterfaceMapWithDefault)"),
          Map.entry("CelSelectorException", DRA + "cel/compile.go (errors)"),
          Map.entry(
              "SelectorAstValidator",
              CEL_GO + "cel/validator.go, " + CEL_GO + "ext/formatting.go (stringFormatValidator)"),
          Map.entry("UpstreamSources", "integration-tests/upstream/go.mod"),
          // Kubernetes CEL libraries
          Map.entry("k8slib.KubernetesCelLibrary", APISERVER + "library/quantity.go, semverlib.go"),
          Map.entry("k8slib.KubernetesListsLibrary", APISERVER + "library/lists.go"),
          Map.entry("k8slib.KubernetesRegexLibrary", APISERVER + "library/regex.go"),
          Map.entry("k8slib.KubernetesNetLibrary", APISERVER + "library/ip.go, cidr.go"),
          Map.entry("k8slib.KubernetesUrlLibrary", APISERVER + "library/urls.go"),
          Map.entry("k8slib.KubernetesFormatLibrary", APISERVER + "library/format.go"),
          Map.entry(
              "k8slib.KubernetesFormats",
              APISERVER
                  + "library/format.go (ConstantFormats), k8s.io/apimachinery/pkg/util/validation"),
          Map.entry("k8slib.DeviceFields", DRA + "cel/compile.go (the device declaration)"),
          // cel-go extensions
          Map.entry(
              "ext.StringFormatLibrary", CEL_GO + "ext/formatting.go, ext/strings.go (quote)"),
          Map.entry("ext.StringIndexLibrary", CEL_GO + "ext/strings.go (indexOf, lastIndexOf)"),
          Map.entry("ext.SortByLibrary", CEL_GO + "ext/lists.go (sort, sortBy)"),
          Map.entry("ext.ListsRangeLibrary", CEL_GO + "ext/lists.go (range)"),
          Map.entry("ext.OptionalMacrosLibrary", CEL_GO + "cel/library.go (optMap, optFlatMap)"),
          Map.entry("ext.OptionalUnwrapOptLibrary", CEL_GO + "cel/library.go (unwrapOpt)"),
          // cost
          Map.entry("cost.CelCostEstimator", CEL_GO + "checker/cost.go"),
          Map.entry("cost.Estimate", CEL_GO + "checker/cost.go (SizeEstimate, CostEstimate)"),
          Map.entry(
              "cost.ExtensionCostEstimators",
              CEL_GO + "ext/lists.go, ext/sets.go (cost estimators)"),
          Map.entry(
              "cost.KubernetesCostEstimator",
              APISERVER + "library/cost.go, " + DRA + "cel/compile.go (sizeEstimator)"),
          Map.entry(
              "cost.CostMeter",
              CEL_GO + "interpreter/runtimecost.go, " + APISERVER + "library/cost.go (CallCost)"),
          Map.entry(
              "cost.CostPlan",
              CEL_GO + "interpreter/planner.go (constant folding, set membership)"),
          // Go standard library and apimachinery
          Map.entry(
              "golang.GoQuantity", "k8s.io/apimachinery/pkg/api/resource/quantity.go, amount.go"),
          Map.entry("golang.GoUrl", "go: net/url/url.go"),
          Map.entry("golang.GoRequestUri", "go: net/url/url.go (ParseRequestURI), net/netip"),
          Map.entry(
              "golang.GoTime",
              "go: time/format.go, time/format_rfc3339.go; " + CEL_GO + "common/types/overflow.go"),
          Map.entry("golang.GoParseFloat", "go: strconv/atof.go"),
          Map.entry("golang.GoFloat", "go: strconv/ftoa.go"),
          Map.entry("golang.GoLocalizedFloat", "golang.org/x/text/message (en_US number printer)"),
          Map.entry("golang.GoQuote", "go: strconv/quote.go"),
          // cel-java workarounds
          Map.entry("compat.CelValues", CEL_GO + "common/types (Compare, Equal)"),
          Map.entry(
              "compat.StandardFunctionsInUpstreamOrder", CEL_GO + "common/stdlib/standard.go"),
          Map.entry("compat.GoTimeFunctions", CEL_GO + "common/types/duration.go, timestamp.go"),
          Map.entry(
              "compat.UniqueVariableNames",
              CEL_GO + "interpreter/planner.go (lexical scope of cel.bind)"),
          Map.entry(
              "compat.EmptyListMembership",
              CEL_GO + "interpreter/planner.go (maybeOptimizeSetMembership)"),
          Map.entry("compat.TypedOverloads", CEL_GO + "checker/checker.go (overload resolution)"));

  private UpstreamSources() {}
}
