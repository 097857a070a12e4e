package io.kdra.core.cel.cost;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.navigation.CelNavigableExpr;
import dev.cel.common.navigation.TraversalOrder;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What the meter needs to know of a program beyond the nodes it is told about: which nodes cel-go's
 * planner turns into constants, which selections and indexes are relative (on a value that is not a
 * variable's attribute: an extra attribute step), which {@code in} calls become set lookups, and
 * the uniquely resolved overloads (trackers apply only to those).
 */
public final class CostPlan {
  private final Set<Long> constants = new HashSet<>();
  private final Set<Long> relative = new HashSet<>();

  /** Attributes a conditional resolves: not steps in cel-go. */
  private final Set<Long> free = new HashSet<>();

  private final Set<Long> setMembership = new HashSet<>();
  private final Map<Long, String> overloads = new HashMap<>();

  /** {@code _?._} calls: the cost of their operand's attribute chain, evaluated twice here. */
  private final Map<Long, Long> doubleEvaluated = new HashMap<>();

  private static final Set<String> TYPE_NAMES =
      Set.of(
          "bool",
          "bytes",
          "double",
          "int",
          "string",
          "uint",
          "list",
          "map",
          "type",
          "null_type",
          "google.protobuf.Duration",
          "google.protobuf.Timestamp",
          "optional_type");

  /** The conversions cel-go's planner folds into a constant when their argument is one. */
  public static final Set<String> CONVERSIONS =
      Set.of(
          "bool",
          "bytes",
          "double",
          "duration",
          "dyn",
          "int",
          "string",
          "timestamp",
          "type",
          "uint");

  /** Free in cel-go: folded into a constant, or an attribute a conditional resolves. */
  boolean isFree(long id) {
    return constants.contains(id) || free.contains(id);
  }

  /** A relative selection or index: one attribute step more in cel-go. */
  boolean isRelative(long id) {
    return relative.contains(id);
  }

  /** An {@code in} on a constant list of primitives: a set lookup in cel-go. */
  boolean isSetMembership(long id) {
    return setMembership.contains(id);
  }

  /** The cost of an {@code _?._} call's operand chain, which cel-java evaluates twice; else 0. */
  long doubleEvaluatedCost(long id) {
    return doubleEvaluated.getOrDefault(id, 0L);
  }

  /** The overload the checker resolved the call {@code id} to, where it resolved just one. */
  String overload(long id) {
    return overloads.get(id);
  }

  /**
   * @param ast the program's AST
   * @param checked the checker's, whose references say which calls resolved to one overload
   */
  public static CostPlan of(CelAbstractSyntaxTree ast, CelAbstractSyntaxTree checked) {
    CostPlan plan = new CostPlan();
    checked
        .getReferenceMap()
        .forEach(
            (id, ref) -> {
              if (ref.overloadIds().size() == 1) {
                plan.overloads.put(id, ref.overloadIds().get(0));
              }
            });
    // children before parents, as the planner decorates
    CelNavigableExpr.fromExpr(ast.getExpr())
        .allNodes(TraversalOrder.POST_ORDER)
        .forEach(n -> plan.visit(n.expr()));
    return plan;
  }

  private void visit(CelExpr e) {
    switch (e.getKind()) {
      case CONSTANT -> constants.add(e.id());
      case IDENT -> {
        // a type name is a constant (a type value) in cel-go's plan
        if (TYPE_NAMES.contains(e.ident().name())) {
          constants.add(e.id());
        }
      }
      case LIST -> {
        if (e.list().optionalIndices().isEmpty()
            && e.list().elements().stream().allMatch(x -> constants.contains(x.id()))) {
          constants.add(e.id());
        }
      }
      case MAP -> {
        if (e.map().entries().stream()
            .allMatch(
                x ->
                    !x.optionalEntry()
                        && constants.contains(x.key().id())
                        && constants.contains(x.value().id()))) {
          constants.add(e.id());
        }
      }
      case SELECT -> {
        if (!isAttribute(e.select().operand()) && !isQualifier(e.select().operand())) {
          relative.add(e.id());
        }
      }
      case CALL -> {
        CelExpr.CelCall call = e.call();
        String f = call.function();
        if (CONVERSIONS.contains(f)
            && call.args().size() == 1
            && call.target().isEmpty()
            && constants.contains(call.args().get(0).id())) {
          constants.add(e.id());
        } else if (f.equals("_?_:_")) {
          // a conditional is an attribute in cel-go's plan; branches that are attributes are
          // resolved through it, never evaluated as steps of their own
          freeAttribute(call.args().get(1));
          freeAttribute(call.args().get(2));
        } else if ((f.equals("_[_]") || f.equals("_[?_]") || f.equals("_?._"))
            && !isAttribute(call.args().get(0))
            && !isQualifier(call.args().get(0))) {
          // the base of a relative attribute: one step for the attribute, then one per
          // qualifier chained on it
          relative.add(e.id());
        } else if (f.equals("@in")
            && call.args().size() == 2
            && constants.contains(call.args().get(1).id())
            && call.args().get(1).getKind() == CelExpr.ExprKind.Kind.LIST
            && call.args().get(1).list().elements().stream().allMatch(CostPlan::isPrimitive)) {
          setMembership.add(e.id());
        }
      }
      default -> {}
    }
    if (e.getKind() == CelExpr.ExprKind.Kind.CALL
        && e.call().function().equals("_?._")
        && (isAttribute(e.call().args().get(0)) || isQualifier(e.call().args().get(0)))) {
      doubleEvaluated.put(e.id(), chainCost(e.call().args().get(0)));
    }
  }

  private void freeAttribute(CelExpr e) {
    if (!isAttribute(e)) {
      return;
    }
    free.add(e.id());
    if (e.getKind() == CelExpr.ExprKind.Kind.SELECT) {
      freeAttribute(e.select().operand());
    } else if (e.getKind() == CelExpr.ExprKind.Kind.CALL) {
      freeAttribute(e.call().args().get(0));
    }
  }

  /** The steps of an attribute chain that are not free (constant keys are). */
  private long chainCost(CelExpr e) {
    if (constants.contains(e.id()) || free.contains(e.id())) {
      return 0;
    }
    long base = relative.contains(e.id()) ? 1 : 0;
    return switch (e.getKind()) {
      case IDENT -> 1;
      case SELECT -> base + 1 + chainCost(e.select().operand());
      case CALL -> isQualifier(e) ? base + 1 + chainCost(e.call().args().get(0)) : 0;
      default -> 0;
    };
  }

  /** A selection or index (of anything). */
  private static boolean isQualifier(CelExpr e) {
    return switch (e.getKind()) {
      case SELECT -> !e.select().testOnly();
      case CALL -> {
        String f = e.call().function();
        yield f.equals("_[_]") || f.equals("_[?_]") || f.equals("_?._");
      }
      default -> false;
    };
  }

  /** An attribute: a variable, or a selection or index of one. */
  private static boolean isAttribute(CelExpr e) {
    return switch (e.getKind()) {
      case IDENT -> true;
      case SELECT -> !e.select().testOnly() && isAttribute(e.select().operand());
      case CALL -> {
        String f = e.call().function();
        yield (f.equals("_[_]") || f.equals("_[?_]") || f.equals("_?._"))
            && isAttribute(e.call().args().get(0));
      }
      default -> false;
    };
  }

  private static boolean isPrimitive(CelExpr e) {
    return e.getKind() == CelExpr.ExprKind.Kind.CONSTANT
        && switch (e.constant().getKind()) {
          case BOOLEAN_VALUE, INT64_VALUE, UINT64_VALUE, DOUBLE_VALUE, STRING_VALUE -> true;
          default -> false;
        };
  }
}
