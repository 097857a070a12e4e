package io.kdra.core.cel.cost;

import com.google.protobuf.ByteString;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.values.CelByteString;
import dev.cel.runtime.CelEvaluationListener;
import io.kdra.core.cel.ext.SortByLibrary;
import io.kdra.core.cel.golang.GoQuantity;
import io.kdra.core.cel.golang.GoUrl;
import io.kdra.core.cel.k8slib.KubernetesFormats;
import io.kdra.core.cel.k8slib.KubernetesNetLibrary;
import io.kdra.core.model.Semver;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The actual cost of one evaluation in cel-go's runtime cost units, as upstream's cost tracker
 * counts them ({@code interpreter/runtimecost.go} of cel-go with the lists and sets extensions'
 * trackers and k8s.io/apiserver's {@code library.CostEstimator.CallCost}, has() free), and the stop
 * past the limit ("operation cancelled: actual cost limit exceeded"). Hand-written: cel-java has no
 * runtime cost tracker. It listens to cel-java's interpreter, which reports every evaluated node
 * with its value after its children, the order in which cel-go's observer charges its program
 * steps; what cel-go's planner folds into constants ({@code OptOptimize}: list and map literals of
 * constants, type conversions of constants, {@code in} a constant list of primitives) is free here
 * too ({@link CostPlan}). Known gap: nodes that fail are not reported by cel-java, so their cost (a
 * few units where an error is absorbed by {@code ||}, {@code &&} or a comprehension) is missing.
 */
public final class CostMeter implements CelEvaluationListener {

  /** Thrown out of the interpreter to abort the evaluation. */
  public static final class LimitExceeded extends RuntimeException {
    public LimitExceeded() {
      super(null, null, false, false);
    }
  }

  private static final double STRING_TRAVERSAL = 0.1;
  private static final double REGEX_LENGTH = 0.25;
  private static final long LIST_CREATE = 10;
  private static final long MAP_CREATE = 30;

  private final CostPlan plan;
  private final long limit;
  private final Map<Long, Object> values = new HashMap<>();
  private long cost;

  /**
   * @param limit the cost limit (unsigned); -1 for none
   */
  public CostMeter(CostPlan plan, long limit) {
    this.plan = plan;
    this.limit = limit;
  }

  /** The cost so far (an unsigned 64-bit value, saturating). */
  public long cost() {
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
    if (plan.isFree(expr.id())) {
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
          return plan.isRelative(expr.id()) ? 1 : 0;
        }
        return plan.isRelative(expr.id()) ? 2 : 1;
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
          long taken = plan.doubleEvaluatedCost(expr.id());
          cost -= Long.compareUnsigned(cost, taken) >= 0 ? taken : cost;
          return optionalQualifierCost(expr, result);
        }
      case "_[?_]":
        return optionalQualifierCost(expr, result);
      case "_[_]":
        return plan.isRelative(expr.id()) ? 2 : 1;
      case "@in":
        if (plan.isSetMembership(expr.id())) {
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
    Long tracked = tracker(plan.overload(expr.id()), function, args, result);
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
    long c = plan.isRelative(expr.id()) ? 2 : 1;
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
      case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes":
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
}
