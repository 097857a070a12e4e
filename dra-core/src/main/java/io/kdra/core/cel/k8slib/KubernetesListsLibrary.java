package io.kdra.core.cel.k8slib;

import com.google.common.primitives.UnsignedLong;
import com.google.protobuf.Duration;
import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.CelKind;
import dev.cel.common.types.ListType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.TypeParamType;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import io.kdra.core.cel.compat.CelValues;
import io.kdra.core.cel.compat.TypedOverloads;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The Kubernetes {@code lists} library ({@code k8s.io/apiserver/pkg/cel/library/lists.go}): {@code
 * isSorted}, {@code sum}, {@code min}, {@code max} on lists of comparable or summable element
 * types, {@code indexOf}/{@code lastIndexOf} on any list, and {@code includes} (its version 1, in
 * the base environment since 1.37) on any value. Same overload ids, results and errors ("min called
 * on empty list"). Hand-written: cel-java has no such library (its own lists extension is cel-go's
 * {@code ext.Lists}, which the environment adds as well).
 */
public final class KubernetesListsLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  private static final TypeParamType A = TypeParamType.create("A");
  private static final String INCLUDES = "list_includes_dyn_dyn";

  /** Element kinds the typed overloads upstream accept, checked by SelectorAstValidator. */
  public static final Set<CelKind> COMPARABLE_KINDS =
      EnumSet.of(
          CelKind.INT,
          CelKind.UINT,
          CelKind.DOUBLE,
          CelKind.BOOL,
          CelKind.DURATION,
          CelKind.TIMESTAMP,
          CelKind.STRING,
          CelKind.BYTES);

  public static final Set<CelKind> SUMMABLE_KINDS =
      EnumSet.of(CelKind.INT, CelKind.UINT, CelKind.DOUBLE, CelKind.DURATION);

  /**
   * Upstream's overloads, one per element type (run by one binding each, see TypedOverloads): for a
   * list of dyn values (attributes) the checker then types min(), max() and sum() as dyn, as
   * cel-go's does. indexOf and lastIndexOf are generic upstream too.
   */
  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(
        CelFunctionDecl.newFunctionDeclaration(
            "isSorted",
            TypedOverloads.declare(
                TypedOverloads.K8S_COMPARABLE,
                t -> "list_" + t + "_is_sorted_bool",
                t -> CelOverloadDecl.newMemberOverload("", SimpleType.BOOL, ListType.create(t)),
                "list_is_sorted")),
        CelFunctionDecl.newFunctionDeclaration(
            "min",
            TypedOverloads.declare(
                TypedOverloads.K8S_COMPARABLE,
                t -> "list_" + t + "_min_" + t,
                t -> CelOverloadDecl.newMemberOverload("", t, ListType.create(t)),
                "list_min")),
        CelFunctionDecl.newFunctionDeclaration(
            "max",
            TypedOverloads.declare(
                TypedOverloads.K8S_COMPARABLE,
                t -> "list_" + t + "_max_" + t,
                t -> CelOverloadDecl.newMemberOverload("", t, ListType.create(t)),
                "list_max")),
        CelFunctionDecl.newFunctionDeclaration(
            "sum",
            TypedOverloads.declare(
                TypedOverloads.K8S_SUMMABLE,
                t -> "list_" + t + "_sum_" + t,
                t -> CelOverloadDecl.newMemberOverload("", t, ListType.create(t)),
                "list_sum")),
        CelFunctionDecl.newFunctionDeclaration(
            "indexOf",
            CelOverloadDecl.newMemberOverload(
                "list_a_index_of_int", SimpleType.INT, ListType.create(A), A)),
        CelFunctionDecl.newFunctionDeclaration(
            "lastIndexOf",
            CelOverloadDecl.newMemberOverload(
                "list_a_last_index_of_int", SimpleType.INT, ListType.create(A), A)),
        CelFunctionDecl.newFunctionDeclaration(
            "includes",
            CelOverloadDecl.newMemberOverload(
                INCLUDES, SimpleType.BOOL, SimpleType.DYN, SimpleType.DYN)));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    runtime.addFunctionBindings(
        CelFunctionBinding.from("list_is_sorted", List.class, KubernetesListsLibrary::isSorted),
        CelFunctionBinding.from("list_min", List.class, list -> extreme(list, "min", 1)),
        CelFunctionBinding.from("list_max", List.class, list -> extreme(list, "max", -1)),
        CelFunctionBinding.from("list_sum", List.class, KubernetesListsLibrary::sum),
        typedSum("int", 0L),
        typedSum("uint", UnsignedLong.ZERO),
        typedSum("double", 0.0),
        typedSum("duration", java.time.Duration.ZERO),
        CelFunctionBinding.from(
            "list_a_index_of_int",
            List.class,
            Object.class,
            (list, item) -> indexOf(list, item, false)),
        CelFunctionBinding.from(
            "list_a_last_index_of_int",
            List.class,
            Object.class,
            (list, item) -> indexOf(list, item, true)),
        CelFunctionBinding.from(
            INCLUDES, Object.class, Object.class, KubernetesListsLibrary::includes));
  }

  /** A list's membership, any other value's equality: {@code <dyn>.includes(<dyn>)}. */
  private static boolean includes(Object target, Object item) {
    if (target instanceof List<?> list) {
      return indexOf(list, item, false) >= 0;
    }
    return CelValues.equal(target, item);
  }

  /**
   * A sum typed by the checker: as the generic one, but an empty list sums to the zero of its
   * static element type, as upstream's per-type overloads do ({@code [].sortBy(x, -x).sum()} is 0.0
   * there: the negation types the list's elements as double).
   */
  private static CelFunctionBinding typedSum(String type, Object zero) {
    String id = "list_" + type + "_sum_" + type;
    TypedOverloads.boundAlone(id);
    return CelFunctionBinding.from(id, List.class, list -> list.isEmpty() ? zero : sum(list));
  }

  /** The summation type of a list: that of its first element (an empty list sums to int 0). */
  private static Object sum(List<?> list) throws CelEvaluationException {
    Object first = list.isEmpty() ? 0L : list.get(0);
    String type =
        first instanceof Long
            ? "int"
            : first instanceof UnsignedLong
                ? "uint"
                : first instanceof Double ? "double" : "duration";
    for (Object o : list) {
      if (o.getClass() != first.getClass()) {
        throw new CelEvaluationException("no such overload");
      }
    }
    if (type.equals("duration")
        && !(first instanceof Duration || first instanceof java.time.Duration)) {
      throw new CelEvaluationException("no such overload");
    }
    return sum(type, list);
  }

  private static boolean isSorted(List<?> list) throws CelEvaluationException {
    for (int i = 1; i < list.size(); i++) {
      if (CelValues.compare(list.get(i - 1), list.get(i)) > 0) {
        return false;
      }
    }
    return true;
  }

  /** The first element that no later one beats: {@code prefer} is the compare result to take. */
  private static Object extreme(List<?> list, String name, int prefer)
      throws CelEvaluationException {
    if (list.isEmpty()) {
      throw new CelEvaluationException(name + " called on empty list");
    }
    Object result = list.get(0);
    for (int i = 1; i < list.size(); i++) {
      if (CelValues.compare(result, list.get(i)) == prefer) {
        result = list.get(i);
      }
    }
    return result;
  }

  private static Object sum(String type, List<?> list) throws CelEvaluationException {
    switch (type) {
      case "int" -> {
        long acc = 0;
        for (Object o : list) {
          try {
            acc = Math.addExact(acc, (Long) o);
          } catch (ArithmeticException e) {
            throw new CelEvaluationException("integer overflow");
          }
        }
        return acc;
      }
      case "uint" -> {
        UnsignedLong acc = UnsignedLong.ZERO;
        for (Object o : list) {
          UnsignedLong next = acc.plus((UnsignedLong) o);
          if (next.compareTo(acc) < 0) {
            throw new CelEvaluationException("unsigned integer overflow");
          }
          acc = next;
        }
        return acc;
      }
      case "double" -> {
        double acc = 0;
        for (Object o : list) {
          acc += (Double) o;
        }
        return acc;
      }
      default -> {
        Object acc = CelValues.zeroDuration(list.isEmpty() ? null : list.get(0));
        for (Object o : list) {
          acc = CelValues.addDurations(acc, o);
        }
        return acc;
      }
    }
  }

  private static long indexOf(List<?> list, Object item, boolean last) {
    if (last) {
      for (int i = list.size() - 1; i >= 0; i--) {
        if (CelValues.equal(list.get(i), item)) {
          return i;
        }
      }
    } else {
      for (int i = 0; i < list.size(); i++) {
        if (CelValues.equal(list.get(i), item)) {
          return i;
        }
      }
    }
    return -1;
  }
}
