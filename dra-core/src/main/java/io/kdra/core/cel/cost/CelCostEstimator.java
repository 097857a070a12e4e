package io.kdra.core.cel.cost;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.ast.CelExpr.CelCall;
import dev.cel.common.ast.CelExpr.CelComprehension;
import dev.cel.common.types.CelKind;
import dev.cel.common.types.CelType;
import dev.cel.common.types.SimpleType;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The static worst-case cost of a selector: a port of cel-go's {@code checker/cost.go} (the {@code
 * coster}), with has() free as the API server configures it ({@code PresenceTestHasCost(false)}),
 * and {@link KubernetesCostEstimator} in the place of the API server's {@code
 * library.CostEstimator} and DRA's size estimator. cel-java has no cost estimator. Upstream's
 * estimate decides whether API validation accepts a selector, so this one must equal it to the
 * unit; the structure and names follow cel-go's to keep the port checkable.
 *
 * <p>Costs are unsigned 64-bit values in a {@code long} (see {@link Estimate}).
 */
public final class CelCostEstimator {

  static final long SELECT_AND_IDENT_COST = 1;
  static final long LIST_CREATE_BASE_COST = 10;
  static final long MAP_CREATE_BASE_COST = 30;
  static final long STRUCT_CREATE_BASE_COST = 40;
  static final double STRING_TRAVERSAL_COST_FACTOR = 0.1;
  static final double REGEX_STRING_LENGTH_COST_FACTOR = 0.25;

  /** cel-go's accumulator names; cel-java's macros use the second. */
  private static final String ACCUMULATOR_NAME = "__result__";

  private static final String HIDDEN_ACCUMULATOR_NAME = "@result";

  /** The worst-case (maximum) cost of the checked expression. */
  public long estimate(CelAbstractSyntaxTree ast) {
    return new Coster(ast).cost(ast.getExpr()).max();
  }

  /** The full range, for tests. */
  Estimate estimateRange(CelAbstractSyntaxTree ast) {
    return new Coster(ast).cost(ast.getExpr());
  }

  /**
   * cel-go's {@code AstNode}: an expression (null for a list's element) as the estimators see it.
   */
  record AstNode(List<String> path, CelType type, CelExpr expr, Estimate computedSize) {}

  /** cel-go's {@code CallEstimate}: a cost and, for lists, maps, strings and bytes, a size. */
  record CallEstimate(Estimate cost, Estimate resultSize) {}

  /** Container kind and key (index) and value sizes of a list or map. */
  record EntrySize(CelKind containerKind, Estimate key, Estimate val) {
    static EntrySize union(EntrySize a, EntrySize b) {
      if (a == null || b == null) {
        return null;
      }
      return new EntrySize(a.containerKind, a.key.union(b.key), a.val.union(b.val));
    }
  }

  private record LocalVar(List<String> path, Estimate size, EntrySize entrySize) {}

  private static final class Coster {
    private final CelAbstractSyntaxTree ast;
    private final KubernetesCostEstimator estimator = new KubernetesCostEstimator();
    private final Map<Long, List<String>> exprPaths = new HashMap<>();
    private final Map<String, Deque<LocalVar>> localVars = new HashMap<>();
    private final Map<Long, Estimate> computedSizes = new HashMap<>();
    private final Map<Long, EntrySize> computedEntrySizes = new HashMap<>();

    Coster(CelAbstractSyntaxTree ast) {
      this.ast = ast;
    }

    Estimate cost(CelExpr e) {
      return switch (e.exprKind().getKind()) {
        case CONSTANT -> Estimate.ZERO;
        case IDENT -> costIdent(e);
        case SELECT -> costSelect(e);
        case CALL -> costCall(e);
        case LIST -> costCreateList(e);
        case MAP -> costCreateMap(e);
        case STRUCT -> costCreateStruct(e);
        case COMPREHENSION -> isBind(e) ? costBind(e) : costComprehension(e);
        default -> Estimate.ZERO;
      };
    }

    private Estimate costIdent(CelExpr e) {
      String name = e.ident().name();
      LocalVar v = peekLocalVar(name);
      addPath(e, v != null ? v.path : List.of(name));
      return Estimate.fixed(SELECT_AND_IDENT_COST);
    }

    private Estimate costSelect(CelExpr e) {
      CelExpr.CelSelect sel = e.select();
      Estimate sum = Estimate.ZERO;
      if (sel.testOnly()) {
        // has(): the presence test itself is free in the API server's environment
        return sum.add(cost(sel.operand()));
      }
      sum = sum.add(cost(sel.operand()));
      CelKind kind = getType(sel.operand()).kind();
      if (kind == CelKind.MAP || kind == CelKind.STRUCT || kind == CelKind.TYPE_PARAM) {
        sum = sum.add(Estimate.fixed(SELECT_AND_IDENT_COST));
      }
      addPath(e, append(getPath(sel.operand()), sel.field()));
      return sum;
    }

    private Estimate costCall(CelExpr e) {
      CelCall call = e.call();
      if (call.function().equals("dyn") && call.args().size() == 1) {
        CelExpr arg = call.args().get(0);
        Estimate argCost = cost(arg);
        copySizeEstimates(e, arg);
        return Estimate.fixed(1).add(argCost);
      }
      List<CelExpr> args = call.args();
      Estimate sum = Estimate.ZERO;
      List<AstNode> argNodes = new ArrayList<>(args.size());
      List<Estimate> argCosts = new ArrayList<>(args.size());
      for (CelExpr arg : args) {
        argCosts.add(cost(arg));
        argNodes.add(newAstNode(arg));
      }
      List<String> overloadIds =
          ast.getReference(e.id())
              .map(r -> ExtensionCostEstimators.toCelGo(r.overloadIds()))
              .orElse(List.of());
      if (overloadIds.isEmpty()) {
        return Estimate.ZERO;
      }
      AstNode target = null;
      if (call.target().isPresent()) {
        sum = sum.add(cost(call.target().get()));
        target = newAstNode(call.target().get());
      }
      Estimate fnCost = new Estimate(Estimate.MAX, 0);
      Estimate resultSize = null;
      for (String overload : overloadIds) {
        CallEstimate overloadCost =
            functionCost(e, call.function(), overload, target, argNodes, argCosts);
        fnCost = fnCost.union(overloadCost.cost());
        if (overloadCost.resultSize() != null) {
          resultSize =
              resultSize == null
                  ? overloadCost.resultSize()
                  : resultSize.union(overloadCost.resultSize());
        }
        // the field path of index operations
        if (overload.equals("index_list") && !args.isEmpty()) {
          resultSize = valSize(computeEntrySize(args.get(0)));
          addPath(e, append(getPath(args.get(0)), "@items"));
        } else if (overload.equals("index_map") && !args.isEmpty()) {
          resultSize = valSize(computeEntrySize(args.get(0)));
          addPath(e, append(getPath(args.get(0)), "@values"));
        }
        if (resultSize == null) {
          resultSize = computeSize(e);
        }
      }
      setSize(e, resultSize);
      return sum.add(fnCost);
    }

    private Estimate costCreateList(CelExpr e) {
      Estimate sum = Estimate.ZERO;
      List<CelExpr> elements = e.list().elements();
      Estimate itemSize = new Estimate(elements.isEmpty() ? 0 : Estimate.MAX, 0);
      for (CelExpr element : elements) {
        sum = sum.add(cost(element));
        itemSize = itemSize.union(sizeOrUnknown(element));
      }
      setEntrySize(e, new EntrySize(CelKind.LIST, Estimate.fixed(1), itemSize));
      return sum.add(Estimate.fixed(LIST_CREATE_BASE_COST));
    }

    private Estimate costCreateMap(CelExpr e) {
      Estimate sum = Estimate.ZERO;
      boolean empty = e.map().entries().isEmpty();
      Estimate keySize = new Estimate(empty ? 0 : Estimate.MAX, 0);
      Estimate valSize = new Estimate(empty ? 0 : Estimate.MAX, 0);
      for (CelExpr.CelMap.Entry entry : e.map().entries()) {
        sum = sum.add(cost(entry.key()));
        sum = sum.add(cost(entry.value()));
        keySize = keySize.union(sizeOrUnknown(entry.key()));
        valSize = valSize.union(sizeOrUnknown(entry.value()));
      }
      setEntrySize(e, new EntrySize(CelKind.MAP, keySize, valSize));
      return sum.add(Estimate.fixed(MAP_CREATE_BASE_COST));
    }

    private Estimate costCreateStruct(CelExpr e) {
      Estimate sum = Estimate.ZERO;
      for (CelExpr.CelStruct.Entry field : e.struct().entries()) {
        sum = sum.add(cost(field.value()));
      }
      return sum.add(Estimate.fixed(STRUCT_CREATE_BASE_COST));
    }

    private Estimate costComprehension(CelExpr e) {
      CelComprehension comp = e.comprehension();
      boolean twoVars = !comp.iterVar2().isEmpty();
      Estimate sum = Estimate.ZERO;
      sum = sum.add(cost(comp.iterRange()));
      sum = sum.add(cost(comp.accuInit()));
      pushLocalVar(comp.accuVar(), comp.accuInit());
      if (twoVars) {
        pushIterKey(comp.iterVar(), comp.iterRange());
        pushIterValue(comp.iterVar2(), comp.iterRange());
      } else {
        pushIterSingle(comp.iterVar(), comp.iterRange());
      }
      Estimate loopCost = cost(comp.loopCondition());
      Estimate stepCost = cost(comp.loopStep());
      popLocalVar(comp.iterVar());
      if (twoVars) {
        popLocalVar(comp.iterVar2());
      }
      sum = sum.add(cost(comp.result()));
      popLocalVar(comp.accuVar());

      Estimate rangeCnt = sizeOrUnknown(comp.iterRange());
      sum = sum.add(rangeCnt.multiply(stepCost.add(loopCost)));

      switch (comp.accuInit().exprKind().getKind()) {
        case CONSTANT -> setSize(e, computeSize(comp.accuInit()));
        case LIST, MAP -> {
          setSize(e, rangeCnt);
          EntrySize stepEntrySize = computeEntrySize(comp.loopStep());
          if (stepEntrySize != null) {
            setEntrySize(e, stepEntrySize);
          }
        }
        default -> {}
      }
      return sum;
    }

    private boolean isBind(CelExpr e) {
      CelComprehension comp = e.comprehension();
      CelExpr range = comp.iterRange();
      CelExpr cond = comp.loopCondition();
      return range.exprKind().getKind() == CelExpr.ExprKind.Kind.LIST
          && range.list().elements().isEmpty()
          && cond.exprKind().getKind() == CelExpr.ExprKind.Kind.CONSTANT
          && cond.constant().getKind() == CelConstant.Kind.BOOLEAN_VALUE
          && !cond.constant().booleanValue()
          && !comp.accuVar().equals(ACCUMULATOR_NAME);
    }

    private Estimate costBind(CelExpr e) {
      CelComprehension comp = e.comprehension();
      Estimate sum = Estimate.ZERO;
      // binds are lazily initialized, so the cost of the empty range is retained
      sum = sum.add(cost(comp.iterRange()));
      sum = sum.add(cost(comp.accuInit()));
      pushLocalVar(comp.accuVar(), comp.accuInit());
      sum = sum.add(cost(comp.result()));
      popLocalVar(comp.accuVar());
      copySizeEstimates(e, comp.result());
      return sum;
    }

    private CallEstimate functionCost(
        CelExpr e,
        String function,
        String overloadId,
        AstNode target,
        List<AstNode> args,
        List<Estimate> argCosts) {
      Estimate argCostSum = Estimate.ZERO;
      for (Estimate a : argCosts) {
        argCostSum = argCostSum.add(a);
      }
      CallEstimate est = ExtensionCostEstimators.estimate(estimator, overloadId, target, args);
      if (est == null) {
        est = estimator.estimateCallCost(function, overloadId, target, args);
      }
      if (est != null) {
        return new CallEstimate(est.cost().add(argCostSum), est.resultSize());
      }
      switch (overloadId) {
        case "string_format":
          if (target != null) {
            return cost(
                sizeOrUnknown(target)
                    .multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR)
                    .add(argCostSum));
          }
          break;
        case "string_to_bytes":
          if (args.size() == 1) {
            Estimate sz = sizeOrUnknown(args.get(0));
            return new CallEstimate(
                sz.multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR).add(argCostSum),
                new Estimate(sz.min(), sz.max() * 4));
          }
          break;
        case "bytes_to_string":
          if (args.size() == 1) {
            Estimate sz = sizeOrUnknown(args.get(0));
            return new CallEstimate(
                sz.multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR).add(argCostSum),
                new Estimate(Long.divideUnsigned(sz.min(), 4), sz.max()));
          }
          break;
        case "strings_quote":
          if (args.size() == 1) {
            Estimate sz = sizeOrUnknown(args.get(0));
            return new CallEstimate(
                sz.multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR).add(argCostSum),
                new Estimate(sz.min() + 2, sz.max() * 2 + 2));
          }
          break;
        case "starts_with_string", "ends_with_string":
          if (args.size() == 1) {
            return cost(
                sizeOrUnknown(args.get(0))
                    .multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR)
                    .add(argCostSum));
          }
          break;
        case "in_list":
          if (args.size() == 2) {
            return cost(sizeOrUnknown(args.get(1)).multiplyByCostFactor(1).add(argCostSum));
          }
          break;
        case "matches_string", "matches":
          {
            // the member form, and since cel-go 0.29 the global matches(string, regex) too
            AstNode str = null;
            AstNode regex = null;
            if (overloadId.equals("matches_string") && target != null && args.size() == 1) {
              str = target;
              regex = args.get(0);
            } else if (overloadId.equals("matches") && target == null && args.size() == 2) {
              str = args.get(0);
              regex = args.get(1);
            }
            if (str != null) {
              Estimate strCost =
                  sizeOrUnknown(str)
                      .add(Estimate.fixed(1))
                      .multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR);
              Estimate regexCost =
                  sizeOrUnknown(regex).multiplyByCostFactor(REGEX_STRING_LENGTH_COST_FACTOR);
              return cost(strCost.multiply(regexCost).add(argCostSum));
            }
          }
          break;
        case "contains_string":
          if (target != null && args.size() == 1) {
            Estimate strCost =
                sizeOrUnknown(target).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR);
            Estimate substrCost =
                sizeOrUnknown(args.get(0)).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR);
            return cost(strCost.multiply(substrCost).add(argCostSum));
          }
          break;
        case "logical_or", "logical_and":
          {
            Estimate lhs = argCosts.get(0);
            Estimate rhs = argCosts.get(1);
            // the minimum is the left side's alone (short circuit)
            return cost(new Estimate(lhs.min(), lhs.add(rhs).max()));
          }
        case "conditional":
          {
            Estimate size = sizeOrUnknown(args.get(1)).union(sizeOrUnknown(args.get(2)));
            setEntrySize(
                e,
                EntrySize.union(
                    computeEntrySize(args.get(1).expr()), computeEntrySize(args.get(2).expr())));
            Estimate argCost = argCosts.get(0).add(argCosts.get(1).union(argCosts.get(2)));
            return new CallEstimate(argCost, size);
          }
        case "add_string", "add_bytes", "add_list":
          if (args.size() == 2) {
            Estimate resultSize = sizeOrUnknown(args.get(0)).add(sizeOrUnknown(args.get(1)));
            EntrySize resultEntrySize =
                EntrySize.union(
                    computeEntrySize(args.get(0).expr()), computeEntrySize(args.get(1).expr()));
            if (resultEntrySize != null) {
              setEntrySize(e, resultEntrySize);
            }
            if (overloadId.equals("add_list")) {
              // concatenation is O(1), handled here to track the size
              return new CallEstimate(Estimate.fixed(1).add(argCostSum), resultSize);
            }
            return new CallEstimate(
                resultSize.multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR).add(argCostSum),
                resultSize);
          }
          break;
        case "less_string",
        "greater_string",
        "less_equals_string",
        "greater_equals_string",
        "less_bytes",
        "greater_bytes",
        "less_equals_bytes",
        "greater_equals_bytes",
        "equals",
        "not_equals":
          {
            Estimate lhs = sizeOrUnknown(args.get(0));
            Estimate rhs = sizeOrUnknown(args.get(1));
            long smallestMax =
                Long.compareUnsigned(rhs.max(), lhs.max()) < 0 ? rhs.max() : lhs.max();
            long min = smallestMax != 0 ? 1 : 0;
            return cost(
                new Estimate(min, smallestMax)
                    .multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR)
                    .add(argCostSum));
          }
        default:
          break;
      }
      // O(1) functions
      return cost(Estimate.fixed(1).add(argCostSum));
    }

    private static CallEstimate cost(Estimate cost) {
      return new CallEstimate(cost, null);
    }

    CelType getType(CelExpr e) {
      return ast.getType(e.id()).orElse(SimpleType.DYN);
    }

    private List<String> getPath(CelExpr e) {
      if (e.exprKind().getKind() == CelExpr.ExprKind.Kind.IDENT) {
        LocalVar v = peekLocalVar(e.ident().name());
        if (v != null) {
          return v.path;
        }
      }
      return exprPaths.get(e.id());
    }

    private void addPath(CelExpr e, List<String> path) {
      exprPaths.put(e.id(), path);
    }

    /** Go's {@code append(path, element)}: a nil path gives a path of one element. */
    private static List<String> append(List<String> path, String element) {
      List<String> result = new ArrayList<>(path == null ? List.of() : path);
      result.add(element);
      return List.copyOf(result);
    }

    private AstNode newAstNode(CelExpr e) {
      List<String> path = getPath(e);
      if (path != null && !path.isEmpty() && isAccumulatorVar(path.get(0))) {
        // only paths to root variables, none to accumulators
        path = null;
      }
      return new AstNode(path, getType(e), e, computeSize(e));
    }

    private static boolean isAccumulatorVar(String name) {
      return name.equals(ACCUMULATOR_NAME) || name.equals(HIDDEN_ACCUMULATOR_NAME);
    }

    private void setSize(CelExpr e, Estimate size) {
      if (size != null) {
        computedSizes.put(e.id(), size);
      }
    }

    private Estimate sizeOrUnknown(CelExpr e) {
      Estimate size = computeSize(e);
      return size != null ? size : Estimate.UNKNOWN;
    }

    private static Estimate sizeOrUnknown(AstNode node) {
      return node.computedSize() != null ? node.computedSize() : Estimate.UNKNOWN;
    }

    private void copySizeEstimates(CelExpr dst, CelExpr src) {
      setSize(dst, computeSize(src));
      setEntrySize(dst, computeEntrySize(src));
    }

    private Estimate computeSize(CelExpr e) {
      Estimate size = computedSizes.get(e.id());
      if (size != null) {
        return size;
      }
      size = computeExprSize(e);
      if (size != null) {
        return size;
      }
      // the estimator first: it may override what the type says
      AstNode node = new AstNode(getPath(e), getType(e), e, null);
      size = estimator.estimateSize(node);
      if (size != null) {
        computedSizes.put(e.id(), size);
        return size;
      }
      size = computeTypeSize(getType(e));
      if (size != null) {
        return size;
      }
      if (e.exprKind().getKind() == CelExpr.ExprKind.Kind.IDENT) {
        LocalVar v = peekLocalVar(e.ident().name());
        if (v != null && v.size != null) {
          return v.size;
        }
      }
      return null;
    }

    private void setEntrySize(CelExpr e, EntrySize size) {
      if (size != null) {
        computedEntrySizes.put(e.id(), size);
      }
    }

    private EntrySize computeEntrySize(CelExpr e) {
      EntrySize size = computedEntrySizes.get(e.id());
      if (size != null) {
        return size;
      }
      if (e.exprKind().getKind() == CelExpr.ExprKind.Kind.IDENT) {
        LocalVar v = peekLocalVar(e.ident().name());
        if (v != null && v.entrySize != null) {
          return v.entrySize;
        }
      }
      return null;
    }

    private static Estimate keySize(EntrySize s) {
      return s == null ? null : s.key;
    }

    private static Estimate valSize(EntrySize s) {
      return s == null ? null : s.val;
    }

    private CelKind container(EntrySize entrySize, CelExpr rangeExpr) {
      return entrySize != null ? entrySize.containerKind : getType(rangeExpr).kind();
    }

    private void pushIterKey(String name, CelExpr range) {
      EntrySize entrySize = computeEntrySize(range);
      String subpath = container(entrySize, range) == CelKind.LIST ? "@indices" : "@keys";
      push(name, new LocalVar(append(getPath(range), subpath), keySize(entrySize), null));
    }

    private void pushIterValue(String name, CelExpr range) {
      EntrySize entrySize = computeEntrySize(range);
      String subpath = container(entrySize, range) == CelKind.LIST ? "@items" : "@values";
      push(name, new LocalVar(append(getPath(range), subpath), valSize(entrySize), null));
    }

    private void pushIterSingle(String name, CelExpr range) {
      EntrySize entrySize = computeEntrySize(range);
      Estimate size = keySize(entrySize);
      String subpath = "@keys";
      if (container(entrySize, range) == CelKind.LIST) {
        size = valSize(entrySize);
        subpath = "@items";
      }
      push(name, new LocalVar(append(getPath(range), subpath), size, null));
    }

    private void pushLocalVar(String name, CelExpr e) {
      // the entry size of the binding propagates too, it may be a list or map
      push(name, new LocalVar(getPath(e), computeSize(e), computeEntrySize(e)));
    }

    private void push(String name, LocalVar v) {
      localVars.computeIfAbsent(name, k -> new ArrayDeque<>()).push(v);
    }

    private LocalVar peekLocalVar(String name) {
      Deque<LocalVar> stack = localVars.get(name);
      return stack == null ? null : stack.peek();
    }

    private void popLocalVar(String name) {
      Deque<LocalVar> stack = localVars.get(name);
      if (stack != null && !stack.isEmpty()) {
        stack.pop();
      }
    }
  }

  /** cel-go's {@code computeExprSize}: the exact size of literals. */
  private static Estimate computeExprSize(CelExpr e) {
    return switch (e.exprKind().getKind()) {
      case CONSTANT -> {
        CelConstant c = e.constant();
        yield switch (c.getKind()) {
          case STRING_VALUE ->
              Estimate.fixed(c.stringValue().codePointCount(0, c.stringValue().length()));
          case BYTES_VALUE -> Estimate.fixed(c.bytesValue().size());
          case BOOLEAN_VALUE,
              DOUBLE_VALUE,
              INT64_VALUE,
              UINT64_VALUE,
              NULL_VALUE,
              TIMESTAMP_VALUE,
              DURATION_VALUE ->
              Estimate.fixed(1);
          default -> null;
        };
      }
      case LIST -> Estimate.fixed(e.list().elements().size());
      case MAP -> Estimate.fixed(e.map().entries().size());
      default -> null;
    };
  }

  private static Estimate computeTypeSize(CelType t) {
    return isScalar(t) ? Estimate.fixed(1) : null;
  }

  /** Types of a size known at compile time (strings are not: their width varies). */
  static boolean isScalar(CelType t) {
    return switch (t.kind()) {
      case BOOL, DOUBLE, DURATION, INT, TIMESTAMP, UINT -> true;
      case OPAQUE ->
          t.name().equals("optional_type")
              && !t.parameters().isEmpty()
              && isScalar(t.parameters().get(0));
      default -> false;
    };
  }
}
