package io.kdra.core.cel.cost;

import static io.kdra.core.cel.cost.CelCostEstimator.REGEX_STRING_LENGTH_COST_FACTOR;
import static io.kdra.core.cel.cost.CelCostEstimator.STRING_TRAVERSAL_COST_FACTOR;

import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.types.CelKind;
import dev.cel.common.types.CelType;
import io.kdra.core.cel.cost.CelCostEstimator.AstNode;
import io.kdra.core.cel.cost.CelCostEstimator.CallEstimate;
import io.kdra.core.cel.k8slib.DeviceFields;
import io.kdra.core.cel.k8slib.KubernetesFormatLibrary;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The estimator the DRA selector environment hands cel-go: k8s.io/apiserver's {@code
 * library.CostEstimator.EstimateCallCost} (costs of the Kubernetes functions and of the strings
 * extension, by function name) over k8s.io/dynamic-resource-allocation's {@code sizeEstimator},
 * which bounds the sizes of the device's fields by the API's limits along the field path. The
 * authorizer and selector functions are left out: the DRA environment has no variable to reach
 * them.
 */
public final class KubernetesCostEstimator {

  /** {@code cel.MaxFormatSize} and {@code cel.MaxNameFormatRegexSize}. */
  private static final long MAX_FORMAT_SIZE = 64;

  private static final long MAX_NAME_FORMAT_REGEX_SIZE = 128;

  private static final Set<String> NOMINAL =
      Set.of(
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
          "getQuery",
          "masked",
          "prefixLength",
          "family",
          "isUnspecified",
          "isLoopback",
          "isLinkLocalMulticast",
          "isLinkLocalUnicast",
          "isGlobalUnicast");

  /** Types whose equality costs 1 (IP and CIDR are opaque upstream, the others objects). */
  private static final Set<String> UNIT_EQUALITY =
      Set.of("net.IP", "net.CIDR", "kubernetes.Quantity", "kubernetes.Semver");

  /** The API's bounds of the device, as DRA's compiler declares them (DeclType.MaxElements). */
  private record DeclType(
      long maxElements, Map<String, DeclType> fields, DeclType keyType, DeclType elemType) {
    static DeclType scalar(long maxElements) {
      return new DeclType(maxElements, Map.of(), null, null);
    }

    static DeclType map(DeclType key, DeclType elem, long maxElements) {
      return new DeclType(maxElements, Map.of(), key, elem);
    }
  }

  private static final DeclType DOMAIN = DeclType.scalar(63);
  private static final DeclType ID = DeclType.scalar(32);

  /** The attribute value: the identity matters, see {@link #estimateSize}. */
  private static final DeclType ATTRIBUTE = DeclType.scalar(64);

  private static final DeclType DEVICE =
      new DeclType(
          0,
          Map.of(
              DeviceFields.DRIVER, DeclType.scalar(63),
              DeviceFields.ALLOW_MULTIPLE_ALLOCATIONS, DeclType.scalar(1),
              DeviceFields.ATTRIBUTES, DeclType.map(DOMAIN, DeclType.map(ID, ATTRIBUTE, 32), 32),
              DeviceFields.CAPACITY,
                  DeclType.map(DOMAIN, DeclType.map(ID, DeclType.scalar(0), 32), 32)),
          null,
          null);

  /**
   * DRA's {@code sizeEstimator.EstimateSize}: the bound of the field the path leads to, null when
   * it leads nowhere known. Any field of an attribute map is an attribute value.
   */
  Estimate estimateSize(AstNode node) {
    List<String> path = node.path();
    if (path == null || path.isEmpty() || !path.get(0).equals(DeviceFields.VARIABLE)) {
      return null;
    }
    DeclType current = DEVICE;
    for (String name : path.subList(1, path.size())) {
      switch (name) {
        case "@items", "@values" -> {
          if (current.elemType() == null) {
            return null;
          }
          current = current.elemType();
        }
        case "@keys" -> {
          if (current.keyType() == null) {
            return null;
          }
          current = current.keyType();
        }
        default -> {
          DeclType field = current.fields().get(name);
          if (field == null) {
            if (current.elemType() == ATTRIBUTE) {
              current = ATTRIBUTE;
              continue;
            }
            return null;
          }
          current = field;
        }
      }
    }
    return new Estimate(0, current.maxElements());
  }

  /** {@code library.CostEstimator.sizeEstimate}. */
  Estimate sizeEstimate(AstNode node) {
    if (node.computedSize() != null) {
      return node.computedSize();
    }
    Estimate size = estimateSize(node);
    return size != null ? size : Estimate.UNKNOWN;
  }

  /** {@code library.CostEstimator.EstimateCallCost}, without the arguments' costs. */
  CallEstimate estimateCallCost(
      String function, String overloadId, AstNode target, List<AstNode> args) {
    if (NOMINAL.contains(function)) {
      return cost(Estimate.fixed(1));
    }
    switch (function) {
      case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes":
        if (target != null) {
          AstNode element = listElementNode(target);
          if (element == null && function.equals("includes")) {
            // a dyn target may be a list: 1 per comparison
            return cost(sizeEstimate(target));
          }
          if (element == null) {
            // a string (indexOf, lastIndexOf)
            return cost(sizeEstimate(target).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR));
          }
          // 1 per comparison, plus the traversal of strings and bytes
          Estimate elementCost = Estimate.fixed(1);
          CelKind k = element.type().kind();
          if (k == CelKind.STRING || k == CelKind.BYTES) {
            elementCost =
                elementCost.add(
                    sizeEstimate(element).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR));
          }
          return cost(sizeEstimate(target).multiply(elementCost));
        }
        break;
      case "url":
        if (args.size() == 1) {
          Estimate sz = sizeEstimate(args.get(0));
          return new CallEstimate(sz.multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR), sz);
        }
        break;
      case "lowerAscii", "upperAscii", "substring", "trim":
        if (target != null) {
          Estimate sz = sizeEstimate(target);
          return new CallEstimate(sz.multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR), sz);
        }
        break;
      case "replace":
        if (target != null && args.size() >= 2) {
          return replace(target, args);
        }
        break;
      case "split":
        if (target != null) {
          Estimate sz = sizeEstimate(target);
          // worst case: a separator of "", each character an element
          long max = sz.max();
          if (args.size() > 1) {
            CelExpr limit = args.get(1).expr();
            if (limit != null
                && limit.exprKind().getKind() == CelExpr.ExprKind.Kind.CONSTANT
                && limit.constant().getKind() == CelConstant.Kind.INT64_VALUE) {
              max = limit.constant().int64Value();
            }
          }
          return new CallEstimate(
              sz.multiplyByCostFactor(2 * STRING_TRAVERSAL_COST_FACTOR), new Estimate(0, max));
        }
        break;
      case "join":
        if (target != null) {
          return join(target, args);
        }
        break;
      case "find", "findAll":
        if (target != null && !args.isEmpty()) {
          Estimate sz = sizeEstimate(target);
          Estimate strCost =
              sz.add(Estimate.fixed(1)).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR);
          Estimate regexCost =
              sizeEstimate(args.get(0)).multiplyByCostFactor(REGEX_STRING_LENGTH_COST_FACTOR);
          return new CallEstimate(strCost.multiply(regexCost), new Estimate(0, sz.max()));
        }
        break;
      case "cidr", "isIP", "isCIDR":
        if (!args.isEmpty()) {
          return cost(sizeEstimate(args.get(0)).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR));
        }
        break;
      case "ip":
        if (overloadId.equals("cidr_ip")) {
          return cost(Estimate.fixed(1));
        }
        if (!args.isEmpty()) {
          return cost(sizeEstimate(args.get(0)).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR));
        }
        break;
      case "ip.isCanonical":
        if (!args.isEmpty()) {
          return cost(
              sizeEstimate(args.get(0)).multiplyByCostFactor(2 * STRING_TRAVERSAL_COST_FACTOR));
        }
        break;
      case "containsIP", "containsCIDR":
        if (!args.isEmpty()) {
          return cost(containsCost(function, overloadId, args));
        }
        break;
      case "quantity", "isQuantity", "semver", "isSemver":
        if (!args.isEmpty()) {
          return cost(sizeEstimate(args.get(0)).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR));
        }
        break;
      case "validate":
        if (!args.isEmpty()) {
          return cost(
              sizeEstimate(args.get(0))
                  .multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR)
                  .multiplyByCostFactor(
                      MAX_NAME_FORMAT_REGEX_SIZE * REGEX_STRING_LENGTH_COST_FACTOR));
        }
        break;
      case "_==_":
        if (args.size() == 2) {
          return equality(args.get(0), args.get(1));
        }
        break;
      default:
        break;
    }
    return null;
  }

  private CallEstimate equality(AstNode lhs, AstNode rhs) {
    CelType t = lhs.type();
    if (!t.equals(rhs.type())) {
      return null;
    }
    if (UNIT_EQUALITY.contains(t.name())) {
      return cost(Estimate.fixed(1));
    }
    if (t.name().equals(KubernetesFormatLibrary.FORMAT.name())) {
      return cost(
          new Estimate(1, MAX_FORMAT_SIZE).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR));
    }
    if (t.name().equals("kubernetes.URL")) {
      // upstream takes the right side's size twice
      Estimate size = Estimate.fixed(1);
      if (rhs.computedSize() != null) {
        size = rhs.computedSize().union(rhs.computedSize());
      }
      return cost(new Estimate(1, size.max()).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR));
    }
    return null;
  }

  private Estimate containsCost(String function, String overloadId, List<AstNode> args) {
    // comparing two byte lists of an IPv4 or IPv6 address
    Estimate sz = new Estimate(4, 16);
    Estimate cost = sz.add(sz).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR);
    if (function.equals("containsCIDR")) {
      cost = cost.add(sz.multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR)).add(Estimate.fixed(1));
    }
    if (overloadId.equals("cidr_contains_ip_string")
        || overloadId.equals("cidr_contains_cidr_string")) {
      // the string is parsed too
      cost = cost.add(sizeEstimate(args.get(0)).multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR));
    }
    return cost;
  }

  private CallEstimate replace(AstNode target, List<AstNode> args) {
    Estimate sz = sizeEstimate(target);
    Estimate toReplace = sizeEstimate(args.get(0));
    Estimate replaceWith = sizeEstimate(args.get(1));
    long countMax;
    long countMin;
    long retainedMax = 0;
    long retainedMin = 0;
    // the longest result
    if (toReplace.min() == 0) {
      // replacing "" surrounds every character with the replacement
      countMax = sz.max() != Estimate.MAX ? sz.max() + 1 : sz.max();
      retainedMax = sz.max();
    } else if (Long.compareUnsigned(replaceWith.max(), toReplace.min()) <= 0) {
      countMax = 0;
      retainedMax = sz.max();
    } else {
      countMax =
          Estimate.fromDouble(
              Math.ceil(Estimate.toDouble(sz.max()) / Estimate.toDouble(toReplace.min())));
    }
    // the shortest result
    if (toReplace.max() == 0) {
      countMin = sz.min() != Estimate.MAX ? sz.min() + 1 : sz.min();
      retainedMin = sz.min();
    } else if (Long.compareUnsigned(toReplace.max(), replaceWith.min()) <= 0) {
      countMin = 0;
      retainedMin = sz.min();
    } else {
      countMin =
          Estimate.fromDouble(
              Math.ceil(Estimate.toDouble(sz.min()) / Estimate.toDouble(toReplace.max())));
    }
    Estimate size =
        new Estimate(countMin, countMax)
            .multiply(replaceWith)
            .add(new Estimate(retainedMin, retainedMax));
    return new CallEstimate(sz.multiplyByCostFactor(2 * STRING_TRAVERSAL_COST_FACTOR), size);
  }

  private CallEstimate join(AstNode target, List<AstNode> args) {
    Estimate sz = Estimate.ZERO;
    Estimate listSize = sizeEstimate(target);
    AstNode element = listElementNode(target);
    if (element != null) {
      sz = listSize.multiply(sizeEstimate(element));
    }
    if (!args.isEmpty()) {
      Estimate sepSize = sizeEstimate(args.get(0));
      long minSeparators = listSize.min() != 0 ? listSize.min() - 1 : 0;
      long maxSeparators = listSize.max() != 0 ? listSize.max() - 1 : 0;
      sz = sz.add(sepSize.multiply(new Estimate(minSeparators, maxSeparators)));
    }
    return new CallEstimate(sz.multiplyByCostFactor(STRING_TRAVERSAL_COST_FACTOR), sz);
  }

  /** A list's element as a node: the element type, the path with {@code @items} if known. */
  private static AstNode listElementNode(AstNode list) {
    List<CelType> params = list.type().parameters();
    if (params.isEmpty()) {
      return null;
    }
    List<String> path = null;
    if (list.path() != null) {
      path = new ArrayList<>(list.path());
      path.add("@items");
    }
    return new AstNode(path, params.get(0), null, null);
  }

  private static CallEstimate cost(Estimate cost) {
    return new CallEstimate(cost, null);
  }
}
