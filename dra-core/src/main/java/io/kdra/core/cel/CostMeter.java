package io.kdra.core.cel;

import com.google.protobuf.ByteString;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.navigation.CelNavigableExpr;
import dev.cel.common.navigation.TraversalOrder;
import dev.cel.common.values.CelByteString;
import dev.cel.runtime.CelEvaluationListener;
import io.kdra.core.model.Semver;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The actual cost of one evaluation in cel-go's runtime cost units, as upstream's cost tracker
 * counts them ({@code interpreter/runtimecost.go} of cel-go v0.26.0 with the lists and sets
 * extensions' trackers and k8s.io/apiserver's {@code library.CostEstimator.CallCost}, has() free),
 * and the stop past the limit ("operation cancelled: actual cost limit exceeded"). Hand-written:
 * cel-java has no runtime cost tracker. It listens to cel-java's interpreter, which reports every
 * evaluated node with its value after its children, the order in which cel-go's observer charges
 * its program steps; what cel-go's planner folds into constants ({@code OptOptimize}: list and map
 * literals of constants, type conversions of constants, {@code in} a constant list of primitives)
 * is free here too ({@link Plan}). Known gap: nodes that fail are not reported by cel-java, so
 * their cost (a few units where an error is absorbed by {@code ||}, {@code &&} or a comprehension)
 * is missing.
 */
final class CostMeter implements CelEvaluationListener {

  /** Thrown out of the interpreter to abort the evaluation. */
  static final class LimitExceeded extends RuntimeException {
    LimitExceeded() {
      super(null, null, false, false);
    }
  }

  private static final double STRING_TRAVERSAL = 0.1;
  private static final double REGEX_LENGTH = 0.25;
  private static final long LIST_CREATE = 10;
  private static final long MAP_CREATE = 30;

  private final Plan plan;
  private final long limit;
  private final Map<Long, Object> values = new HashMap<>();
  private long cost;

  /**
   * @param limit the cost limit (unsigned); -1 for none
   */
  CostMeter(Plan plan, long limit) {
    this.plan = plan;
    this.limit = limit;
  }

  /** The cost so far (an unsigned 64-bit value, saturating). */
  long cost() {
    return cost;
  }

  @Override
  public void callback(CelExpr expr, Object value) {
    values.put(expr.id(), value);
    long step = stepCost(expr, value);
    cost = cost + step;
    if (Long.compareUnsigned(cost, step) < 0) {
      cost = -1L;
    }
    if (Long.compareUnsigned(cost, limit) > 0) {
      throw new LimitExceeded();
    }
  }

  private long stepCost(CelExpr expr, Object value) {
    if (plan.constants.contains(expr.id()) || plan.free.contains(expr.id())) {
      return 0;
    }
    switch (expr.getKind()) {
      case CONSTANT, COMPREHENSION:
        return 0;
      case IDENT:
        return 1;
      case SELECT:
        if (expr.select().testOnly()) {
          // has(): PresenceTestHasCost(false); on a value that is not an attribute, the
          // relative attribute's own step remains
          return plan.relative.contains(expr.id()) ? 1 : 0;
        }
        return plan.relative.contains(expr.id()) ? 2 : 1;
      case LIST:
        return LIST_CREATE;
      case MAP:
        return MAP_CREATE;
      case STRUCT:
        return 40;
      case CALL:
        return callCost(expr, value);
      default:
        return 0;
    }
  }

  private long callCost(CelExpr expr, Object result) {
    CelExpr.CelCall call = expr.call();
    String function = call.function();
    switch (function) {
      case "_&&_", "_||_", "_?_:_":
        return 0;
      case "or", "orValue":
        // cel-go evaluates these itself (evalOptionalOr...), not as calls
        return call.target().isPresent() ? 0 : 1;
      case "_?._":
        {
          // cel-java evaluates the operand twice (a presence test, then the selection); cel-go
          // once: its attribute steps are taken back
          long taken = plan.doubleEvaluated.getOrDefault(expr.id(), 0L);
          cost -= Long.compareUnsigned(cost, taken) >= 0 ? taken : cost;
          return optionalQualifierCost(expr, result);
        }
      case "_[?_]":
        return optionalQualifierCost(expr, result);
      case "_[_]":
        return plan.relative.contains(expr.id()) ? 2 : 1;
      case "@in":
        if (plan.setMembership.contains(expr.id())) {
          return 0;
        }
        break;
      default:
        break;
    }
    ArrayList<Object> args = new ArrayList<>();
    call.target().ifPresent(t -> args.add(values.get(t.id())));
    for (CelExpr a : call.args()) {
      args.add(values.get(a.id()));
    }
    Long tracked = tracker(plan.overloads.get(expr.id()), function, args, result);
    if (tracked != null) {
      return tracked;
    }
    Long k8s = kubernetesCallCost(function, args, result);
    if (k8s != null) {
      return k8s;
    }
    return defaultCallCost(function, args);
  }

  /** An optional qualifier that finds nothing is not charged in cel-go. */
  private long optionalQualifierCost(CelExpr expr, Object result) {
    long c = plan.relative.contains(expr.id()) ? 2 : 1;
    return result instanceof Optional<?> o && o.isEmpty() ? c - 1 : c;
  }

  /** The lists and sets extensions' overload trackers (a uniquely resolved overload only). */
  private static Long tracker(String overload, String function, List<Object> args, Object result) {
    switch (function) {
      case "slice", "lists.range", "reverse":
        return allocatingList(1, size(result));
      case "flatten":
        double depth = args.size() == 2 && args.get(1) instanceof Long d ? d : 1.0;
        return allocatingList(depth, size(args.get(0)));
      case "distinct":
        return selfCompare(args.get(0));
      case "sort":
        return overload != null ? selfCompare(args.get(0)) : null;
      case SortByLibrary.FUNCTION:
        return overload != null ? selfCompare(args.get(1)) : null;
      case "sets.contains", "sets.intersects":
        return 1 + (long) ((double) (size(args.get(0)) * size(args.get(1))) * 1);
      case "sets.equivalent":
        return 1 + (long) ((double) (size(args.get(0)) * size(args.get(1))) * 2);
      default:
        return null;
    }
  }

  private static long allocatingList(double factor, long size) {
    return (long) ((double) size * factor) + 1 + LIST_CREATE;
  }

  private static long selfCompare(Object list) {
    long size = size(list);
    double factor = 2.0;
    if (size == 0) {
      return allocatingList(factor, 0);
    }
    Object first = ((List<?>) list).get(0);
    if (first instanceof String || first instanceof ByteString || first instanceof CelByteString) {
      factor += STRING_TRAVERSAL;
    }
    return allocatingList(factor, size * size);
  }

  /** k8s.io/apiserver's {@code CostEstimator.CallCost}, by function name. */
  private static Long kubernetesCallCost(String function, List<Object> args, Object result) {
    switch (function) {
      case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf":
        return args.isEmpty() ? 0L : traversal(args.get(0));
      case "url",
      "lowerAscii",
      "upperAscii",
      "substring",
      "trim",
      "cidr",
      "isIP",
      "isCIDR",
      "quantity",
      "isQuantity",
      "semver",
      "isSemver":
        return ceil(k8sSize(args.get(0)) * STRING_TRAVERSAL);
      case "replace", "split":
        return ceil(k8sSize(args.get(0)) * 2 * STRING_TRAVERSAL);
      case "join":
        return ceil(k8sSize(result) * 2 * STRING_TRAVERSAL);
      case "find", "findAll":
        if (args.size() >= 2) {
          return ceil((1.0 + k8sSize(args.get(0))) * STRING_TRAVERSAL)
              * ceil(k8sSize(args.get(1)) * REGEX_LENGTH);
        }
        return null;
      case "ip":
        return args.get(0) instanceof String ? ceil(k8sSize(args.get(0)) * STRING_TRAVERSAL) : 1L;
      case "ip.isCanonical":
        return ceil(k8sSize(args.get(0)) * 2 * STRING_TRAVERSAL);
      case "masked",
      "prefixLength",
      "family",
      "isUnspecified",
      "isLoopback",
      "isLinkLocalMulticast",
      "isLinkLocalUnicast",
      "isGlobalUnicast",
      "format.named",
      "sign",
      "asInteger",
      "isInteger",
      "asApproximateFloat",
      "isGreaterThan",
      "isLessThan",
      "compareTo",
      "add",
      "sub",
      "major",
      "minor",
      "patch",
      "getScheme",
      "getHostname",
      "getHost",
      "getPort",
      "getEscapedPath",
      "getQuery":
        return 1L;
      case "containsIP":
        if (args.size() >= 2) {
          long c = ceil((double) (k8sSize(args.get(0)) + k8sSize(args.get(0))) * STRING_TRAVERSAL);
          return args.get(1) instanceof String
              ? c + ceil(k8sSize(args.get(1)) * STRING_TRAVERSAL)
              : c;
        }
        return null;
      case "containsCIDR":
        if (args.size() >= 2) {
          long cidr = k8sSize(args.get(0));
          long c =
              ceil((double) (cidr + cidr) * STRING_TRAVERSAL) + ceil(cidr * STRING_TRAVERSAL) + 1;
          return args.get(1) instanceof String
              ? c + ceil(k8sSize(args.get(1)) * STRING_TRAVERSAL)
              : c;
        }
        return null;
      case "validate":
        if (args.size() >= 2 && args.get(0) instanceof KubernetesFormats.NamedFormat f) {
          return ceil((1.0 + k8sSize(args.get(1))) * STRING_TRAVERSAL)
              * ceil(maxRegexSize(f.name()) * REGEX_LENGTH);
        }
        return null;
      case "_==_":
        if (args.size() == 2 && isKubernetesValue(args.get(0))) {
          return 1L;
        }
        return null;
      default:
        return null;
    }
  }

  private static boolean isKubernetesValue(Object v) {
    return v instanceof GoQuantity
        || v instanceof KubernetesNetLibrary.Ip
        || v instanceof KubernetesNetLibrary.Cidr
        || v instanceof KubernetesFormats.NamedFormat
        || v instanceof GoUrl
        || v instanceof Semver;
  }

  /** The {@code MaxRegexSize} of upstream's named formats. */
  private static long maxRegexSize(String format) {
    return switch (format) {
      case "DNS1123Label", "DNS1035Label", "DNS1123LabelPrefix", "DNS1035LabelPrefix" -> 30;
      case "DNS1123Subdomain", "QualifiedName", "DNS1123SubdomainPrefix" -> 60;
      case "LabelValue" -> 40;
      case "URI" -> 1103;
      case "uuid" -> 70;
      case "byte" -> 84;
      default -> 71; // date, datetime: len(strfmt.DateTimePattern)
    };
  }

  /** cel-go's defaults by overload, then one unit. */
  private static long defaultCallCost(String function, List<Object> args) {
    switch (function) {
      case "startsWith", "endsWith", "strings.quote", "format":
        return ceil(size(args.get(0)) * STRING_TRAVERSAL);
      case "bytes", "string":
        if (args.size() == 1
            && (args.get(0) instanceof String && function.equals("bytes")
                || isBytes(args.get(0)) && function.equals("string"))) {
          return ceil(size(args.get(0)) * STRING_TRAVERSAL);
        }
        return 1;
      case "@in":
        return args.get(1) instanceof List<?> ? size(args.get(1)) : 1;
      case "_<_", "_>_", "_<=_", "_>=_":
        if (args.get(0) instanceof String && args.get(1) instanceof String
            || isBytes(args.get(0)) && isBytes(args.get(1))) {
          return ceil(Math.min(size(args.get(0)), size(args.get(1))) * STRING_TRAVERSAL);
        }
        return 1;
      case "_==_", "_!=_":
        return ceil(Math.min(size(args.get(0)), size(args.get(1))) * STRING_TRAVERSAL);
      case "_+_":
        if (args.get(0) instanceof String && args.get(1) instanceof String
            || isBytes(args.get(0)) && isBytes(args.get(1))) {
          return ceil((size(args.get(0)) + size(args.get(1))) * STRING_TRAVERSAL);
        }
        return 1;
      case "matches":
        if (args.get(0) instanceof String && args.get(1) instanceof String) {
          return ceil((1.0 + size(args.get(0))) * STRING_TRAVERSAL)
              * ceil(size(args.get(1)) * REGEX_LENGTH);
        }
        return 1;
      case "contains":
        if (args.get(0) instanceof String && args.get(1) instanceof String) {
          return ceil(size(args.get(0)) * STRING_TRAVERSAL)
              * ceil(size(args.get(1)) * STRING_TRAVERSAL);
        }
        return 1;
      default:
        return 1;
    }
  }

  private static long ceil(double v) {
    return (long) Math.ceil(v);
  }

  private static boolean isBytes(Object v) {
    return v instanceof ByteString || v instanceof CelByteString;
  }

  /** cel-go's {@code actualSize}: sizers' size, a present optional's value's, else 1. */
  private static long size(Object v) {
    if (v instanceof Optional<?> o) {
      return o.isPresent() ? size(o.get()) : 1;
    }
    return k8sSize(v);
  }

  /**
   * k8s.io/apiserver's {@code actualSize}: code points, bytes, elements, entries, the sizes IP and
   * CIDR values report; else 1.
   */
  private static long k8sSize(Object v) {
    if (v instanceof String s) {
      return s.codePointCount(0, s.length());
    }
    if (v instanceof ByteString b) {
      return b.size();
    }
    if (v instanceof CelByteString b) {
      return b.size();
    }
    if (v instanceof List<?> l) {
      return l.size();
    }
    if (v instanceof Map<?, ?> m) {
      return m.size();
    }
    if (v instanceof KubernetesNetLibrary.Ip ip) {
      return ip.bytes().length; // IP.Size(): the address's bytes
    }
    if (v instanceof KubernetesNetLibrary.Cidr cidr) {
      return (cidr.bits() + 7) / 8; // CIDR.Size(): the prefix length's bytes, rounded up
    }
    return 1;
  }

  /** k8s.io/apiserver's {@code traversalCost}. */
  private static long traversal(Object v) {
    if (v instanceof String s) {
      return (long) (s.getBytes(StandardCharsets.UTF_8).length * STRING_TRAVERSAL);
    }
    if (isBytes(v)) {
      return (long) (k8sSize(v) * STRING_TRAVERSAL);
    }
    if (v instanceof List<?> l) {
      long c = 0;
      for (Object e : l) {
        c += traversal(e);
      }
      return c;
    }
    if (v instanceof Map<?, ?> m) {
      long c = 0;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        c += traversal(e.getKey()) + traversal(e.getValue());
      }
      return c;
    }
    return 1;
  }

  /**
   * What the meter needs to know of a program beyond the nodes it is told about: which nodes
   * cel-go's planner turns into constants, which selections and indexes are relative (on a value
   * that is not a variable's attribute: an extra attribute step), which {@code in} calls become set
   * lookups, and the uniquely resolved overloads (trackers apply only to those).
   */
  static final class Plan {
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

    private static final Set<String> CONVERSIONS =
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

    /**
     * @param ast the program's AST
     * @param checked the checker's, whose references say which calls resolved to one overload
     */
    static Plan of(CelAbstractSyntaxTree ast, CelAbstractSyntaxTree checked) {
      Plan plan = new Plan();
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
              && call.args().get(1).list().elements().stream().allMatch(Plan::isPrimitive)) {
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
}
