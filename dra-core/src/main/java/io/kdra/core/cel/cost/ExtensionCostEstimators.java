package io.kdra.core.cel.cost;

import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import io.kdra.core.cel.cost.CelCostEstimator.AstNode;
import io.kdra.core.cel.cost.CelCostEstimator.CallEstimate;
import java.util.List;

/**
 * The per-overload cost estimators that cel-go's lists (version 3) and sets extensions register
 * ({@code checker.OverloadCostEstimate} in {@code ext/lists.go}, {@code ext/sets.go}), and the
 * translation of cel-java's overload ids to cel-go's where they differ.
 */
public final class ExtensionCostEstimators {

  private ExtensionCostEstimators() {}

  /** cel-go's overload ids for cel-java's: one differs (flatten with a depth). */
  static List<String> toCelGo(List<String> ids) {
    return ids.stream()
        .map(id -> id.equals("list_flatten_list_int") ? "list_flatten_int" : id)
        .toList();
  }

  /** The overload's own estimate, or null where it has none (cel-go then asks the estimator). */
  static CallEstimate estimate(
      KubernetesCostEstimator estimator, String overloadId, AstNode target, List<AstNode> args) {
    switch (overloadId) {
      case "list_sets_contains_list", "list_sets_intersects_list":
        return setsCost(estimator, 1, args);
      case "list_sets_equivalent_list":
        return setsCost(estimator, 2, args);
      case "list_slice":
        {
          if (target == null || args.size() != 2) {
            return null;
          }
          Estimate sz = estimator.sizeEstimate(target);
          long start = nodeAsIntValue(args.get(0), 0);
          long end = nodeAsIntValue(args.get(1), sz.max());
          return allocatingListCall(1, Estimate.fixed(end - start));
        }
      case "lists_range":
        if (target != null || args.size() != 1) {
          return null;
        }
        return allocatingListCall(1, Estimate.fixed(nodeAsIntValue(args.get(0), Estimate.MAX)));
      case "list_reverse":
        if (target == null || !args.isEmpty()) {
          return null;
        }
        return allocatingListCall(1, estimator.sizeEstimate(target));
      case "list_flatten", "list_flatten_int":
        {
          if (target == null || args.size() > 1) {
            return null;
          }
          long depth = args.size() == 1 ? nodeAsIntValue(args.get(0), Estimate.MAX) : 1;
          return allocatingListCall(Estimate.toDouble(depth), estimator.sizeEstimate(target));
        }
      case "list_distinct":
        {
          if (target == null || !args.isEmpty()) {
            return null;
          }
          Estimate sz = estimator.sizeEstimate(target);
          return allocatingListCall(2.0, sz.multiply(sz));
        }
      default:
        break;
    }
    if (overloadId.startsWith("list_") && overloadId.endsWith("_sortByAssociatedKeys")) {
      if (target == null || args.size() != 1) {
        return null;
      }
      return sortCost(estimator, args.get(0), overloadId);
    }
    if (overloadId.startsWith("list_") && overloadId.endsWith("_sort")) {
      if (target == null || !args.isEmpty()) {
        return null;
      }
      return sortCost(estimator, target, overloadId);
    }
    return null;
  }

  private static CallEstimate setsCost(
      KubernetesCostEstimator estimator, double factor, List<AstNode> args) {
    if (args.size() != 2) {
      return null;
    }
    Estimate cost =
        estimator
            .sizeEstimate(args.get(0))
            .multiply(estimator.sizeEstimate(args.get(1)))
            .multiplyByCostFactor(factor)
            .add(Estimate.fixed(1));
    return new CallEstimate(cost, null);
  }

  /** O(n^2) with a factor of 2 for the comparisons, more for strings and bytes. */
  private static CallEstimate sortCost(
      KubernetesCostEstimator estimator, AstNode node, String overloadId) {
    Estimate sz = estimator.sizeEstimate(node);
    double factor = 2.0;
    if (overloadId.startsWith("list_string_") || overloadId.startsWith("list_bytes_")) {
      factor += CelCostEstimator.STRING_TRAVERSAL_COST_FACTOR;
    }
    return allocatingListCall(factor, sz.multiply(sz));
  }

  /** A call's dispatch (1) plus the allocated list (10) plus the factor per element. */
  private static CallEstimate allocatingListCall(double factor, Estimate listSize) {
    Estimate cost =
        listSize
            .multiplyByCostFactor(factor)
            .add(Estimate.fixed(1))
            .add(Estimate.fixed(CelCostEstimator.LIST_CREATE_BASE_COST));
    return new CallEstimate(cost, listSize);
  }

  private static long nodeAsIntValue(AstNode node, long defaultValue) {
    CelExpr e = node.expr();
    if (e == null
        || e.exprKind().getKind() != CelExpr.ExprKind.Kind.CONSTANT
        || e.constant().getKind() != CelConstant.Kind.INT64_VALUE) {
      return defaultValue;
    }
    long value = e.constant().int64Value();
    return Math.max(0, value);
  }
}
