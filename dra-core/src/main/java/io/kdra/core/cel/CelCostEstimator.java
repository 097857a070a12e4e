package io.kdra.core.cel;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.ast.CelExpr.CelCall;
import dev.cel.common.ast.CelExpr.CelComprehension;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A static worst-case cost estimate of a selector, after cel-go's {@code checker/cost.go} as the
 * Kubernetes API server applies it to DRA selectors: every call and field selection costs 1,
 * string traversals cost a tenth of the string's size, list and map literals 10 and 30, and a
 * comprehension its range's size times the cost of one iteration. Sizes are bounded as upstream's
 * size estimator bounds the device: at most 32 entries per map, 64 characters per string.
 *
 * <p>This is an independent implementation of the same rules, not a port: it is conservative
 * where cel-go is more precise (e.g. both branches of a ternary are sized by the larger).
 * cel-java has no cost estimator of its own.
 */
final class CelCostEstimator {

  private static final long MAX_MAP_ENTRIES = 32;
  private static final long MAX_STRING_SIZE = 64;
  private static final long LIST_CREATE_COST = 10;
  private static final long MAP_CREATE_COST = 30;
  private static final long STRUCT_CREATE_COST = 40;

  /** Cost of evaluating a node and the largest size (characters or elements) of its value. */
  private record Estimate(long cost, long size) {}

  long estimate(CelAbstractSyntaxTree ast) {
    return visit(ast.getExpr(), Map.of()).cost();
  }

  private Estimate visit(CelExpr e, Map<String, Long> scope) {
    return switch (e.exprKind().getKind()) {
      case CONSTANT -> constant(e.constant());
      case IDENT -> new Estimate(1, scope.getOrDefault(e.ident().name(), MAX_MAP_ENTRIES));
      case SELECT -> new Estimate(add(visit(e.select().operand(), scope).cost(), 1),
          Math.max(MAX_STRING_SIZE, MAX_MAP_ENTRIES));
      case CALL -> call(e.call(), scope);
      case LIST -> literal(e.list().elements(), LIST_CREATE_COST, scope);
      case MAP -> {
        List<CelExpr> parts = new ArrayList<>();
        e.map().entries().forEach(entry -> {
          parts.add(entry.key());
          parts.add(entry.value());
        });
        Estimate all = literal(parts, MAP_CREATE_COST, scope);
        yield new Estimate(all.cost(), e.map().entries().size());
      }
      case STRUCT -> {
        List<CelExpr> values = new ArrayList<>();
        e.struct().entries().forEach(entry -> values.add(entry.value()));
        yield literal(values, STRUCT_CREATE_COST, scope);
      }
      case COMPREHENSION -> comprehension(e.comprehension(), scope);
      default -> new Estimate(0, 0);
    };
  }

  private static Estimate constant(CelConstant c) {
    return switch (c.getKind()) {
      case STRING_VALUE -> new Estimate(0, c.stringValue().length());
      case BYTES_VALUE -> new Estimate(0, c.bytesValue().size());
      default -> new Estimate(0, 1);
    };
  }

  private Estimate literal(List<CelExpr> parts, long createCost, Map<String, Long> scope) {
    long cost = createCost;
    for (CelExpr part : parts) {
      cost = add(cost, visit(part, scope).cost());
    }
    return new Estimate(cost, parts.size());
  }

  private Estimate call(CelCall call, Map<String, Long> scope) {
    List<Estimate> args = new ArrayList<>();
    call.target().ifPresent(t -> args.add(visit(t, scope)));
    call.args().forEach(a -> args.add(visit(a, scope)));
    long sum = 0;
    long maxSize = 0;
    for (Estimate a : args) {
      sum = add(sum, a.cost());
      maxSize = Math.max(maxSize, a.size());
    }
    return switch (call.function()) {
      case "_&&_", "_||_", "!_" -> new Estimate(sum, 1);
      case "_?_:_" -> new Estimate(add(args.get(0).cost(),
          Math.max(args.get(1).cost(), args.get(2).cost())), maxSize);
      case "contains", "startsWith", "endsWith", "split", "lowerAscii", "upperAscii", "trim",
          "replace", "indexOf", "lastIndexOf" ->
          new Estimate(add(sum, 1 + traversal(args.get(0).size())), args.get(0).size());
      case "matches" -> new Estimate(add(sum,
          mul(1 + traversal(args.get(0).size()), 1 + (args.get(args.size() - 1).size() + 3) / 4)),
          1);
      case "_==_", "_!=_" -> new Estimate(add(sum,
          1 + traversal(Math.min(args.get(0).size(), args.get(1).size()))), 1);
      case "_+_" -> new Estimate(add(sum, 1 + traversal(add(args.get(0).size(),
          args.get(1).size()))), add(args.get(0).size(), args.get(1).size()));
      case "@in" -> new Estimate(add(sum, add(1, args.get(1).size())), 1);
      // lists.range(n): a list of n elements, unbounded unless n is a literal
      case "lists.range" -> new Estimate(add(sum, 1), call.args().size() == 1
          && call.args().get(0).exprKind().getKind() == CelExpr.ExprKind.Kind.CONSTANT
          && call.args().get(0).constant().getKind() == CelConstant.Kind.INT64_VALUE
          ? Math.max(0, call.args().get(0).constant().int64Value()) : Long.MAX_VALUE);
      default -> new Estimate(add(sum, 1), maxSize);
    };
  }

  private Estimate comprehension(CelComprehension c, Map<String, Long> scope) {
    Estimate range = visit(c.iterRange(), scope);
    Estimate init = visit(c.accuInit(), scope);
    Map<String, Long> inner = new HashMap<>(scope);
    inner.put(c.iterVar(), Math.max(MAX_STRING_SIZE, MAX_MAP_ENTRIES));
    inner.put(c.accuVar(), range.size());
    long perIteration = add(visit(c.loopCondition(), inner).cost(),
        visit(c.loopStep(), inner).cost());
    long cost = add(add(range.cost(), init.cost()), mul(range.size(), perIteration));
    return new Estimate(add(cost, visit(c.result(), inner).cost()), range.size());
  }

  private static long traversal(long size) {
    return (size + 9) / 10;
  }

  private static long add(long a, long b) {
    long r = a + b;
    return r < 0 ? Long.MAX_VALUE : r;
  }

  private static long mul(long a, long b) {
    if (a == 0 || b == 0) {
      return 0;
    }
    return a > Long.MAX_VALUE / b ? Long.MAX_VALUE : a * b;
  }
}
