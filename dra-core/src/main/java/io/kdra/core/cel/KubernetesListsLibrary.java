package io.kdra.core.cel;

import com.google.common.primitives.UnsignedLong;
import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.CelType;
import dev.cel.common.types.ListType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.TypeParamType;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Kubernetes {@code lists} library ({@code k8s.io/apiserver/pkg/cel/library/lists.go}):
 * {@code isSorted}, {@code sum}, {@code min}, {@code max} on lists of comparable or summable
 * element types, and {@code indexOf}/{@code lastIndexOf} on any list. Same overload ids, results
 * and errors ("min called on empty list"). Hand-written: cel-java has no such library (its own
 * lists extension is cel-go's {@code ext.Lists}, which the environment adds as well).
 */
final class KubernetesListsLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  private static final Map<String, CelType> SUMMABLE = Map.of(
      "int", SimpleType.INT, "uint", SimpleType.UINT, "double", SimpleType.DOUBLE,
      "duration", SimpleType.DURATION);
  private static final Map<String, CelType> COMPARABLE = Map.of(
      "int", SimpleType.INT, "uint", SimpleType.UINT, "double", SimpleType.DOUBLE,
      "bool", SimpleType.BOOL, "duration", SimpleType.DURATION,
      "timestamp", SimpleType.TIMESTAMP, "string", SimpleType.STRING, "bytes", SimpleType.BYTES);
  private static final TypeParamType A = TypeParamType.create("A");

  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    List<CelOverloadDecl> isSorted = new ArrayList<>();
    List<CelOverloadDecl> min = new ArrayList<>();
    List<CelOverloadDecl> max = new ArrayList<>();
    List<CelOverloadDecl> sum = new ArrayList<>();
    COMPARABLE.forEach((name, type) -> {
      isSorted.add(CelOverloadDecl.newMemberOverload("list_" + name + "_is_sorted_bool",
          SimpleType.BOOL, ListType.create(type)));
      min.add(CelOverloadDecl.newMemberOverload("list_" + name + "_min_" + name, type,
          ListType.create(type)));
      max.add(CelOverloadDecl.newMemberOverload("list_" + name + "_max_" + name, type,
          ListType.create(type)));
    });
    SUMMABLE.forEach((name, type) -> sum.add(CelOverloadDecl.newMemberOverload(
        "list_" + name + "_sum_" + name, type, ListType.create(type))));
    checker.addFunctionDeclarations(
        CelFunctionDecl.newFunctionDeclaration("isSorted", isSorted),
        CelFunctionDecl.newFunctionDeclaration("min", min),
        CelFunctionDecl.newFunctionDeclaration("max", max),
        CelFunctionDecl.newFunctionDeclaration("sum", sum),
        CelFunctionDecl.newFunctionDeclaration("indexOf", CelOverloadDecl.newMemberOverload(
            "list_a_index_of_int", SimpleType.INT, ListType.create(A), A)),
        CelFunctionDecl.newFunctionDeclaration("lastIndexOf", CelOverloadDecl.newMemberOverload(
            "list_a_last_index_of_int", SimpleType.INT, ListType.create(A), A)));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    List<CelFunctionBinding> bindings = new ArrayList<>();
    COMPARABLE.keySet().forEach(name -> {
      bindings.add(CelFunctionBinding.from("list_" + name + "_is_sorted_bool", List.class,
          KubernetesListsLibrary::isSorted));
      bindings.add(CelFunctionBinding.from("list_" + name + "_min_" + name, List.class,
          list -> extreme(list, "min", 1)));
      bindings.add(CelFunctionBinding.from("list_" + name + "_max_" + name, List.class,
          list -> extreme(list, "max", -1)));
    });
    SUMMABLE.keySet().forEach(name -> bindings.add(CelFunctionBinding.from(
        "list_" + name + "_sum_" + name, List.class, list -> sum(name, list))));
    bindings.add(CelFunctionBinding.from("list_a_index_of_int", List.class, Object.class,
        (list, item) -> indexOf(list, item, false)));
    bindings.add(CelFunctionBinding.from("list_a_last_index_of_int", List.class, Object.class,
        (list, item) -> indexOf(list, item, true)));
    runtime.addFunctionBindings(bindings);
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
