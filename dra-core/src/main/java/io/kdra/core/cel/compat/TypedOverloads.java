package io.kdra.core.cel.compat;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.ast.CelReference;
import dev.cel.common.types.CelType;
import dev.cel.common.types.SimpleType;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Functions declared as cel-go declares them, one overload per element type, but run by one
 * binding. The checker must see cel-go's typed overloads: where several apply (a list of dyn) the
 * result is dyn as in cel-go, and the typing and the cost estimate of the rest of the expression
 * follow from it. cel-java's runtime, though, cannot choose among overloads that all take a List,
 * so {@link #forRuntime} points such calls at the one binding.
 */
public final class TypedOverloads {

  /** cel-go's comparable types by the names the lists extension uses in overload ids. */
  public static final Map<String, CelType> EXT_COMPARABLE =
      ordered(
          "int",
          SimpleType.INT,
          "uint",
          SimpleType.UINT,
          "double",
          SimpleType.DOUBLE,
          "bool",
          SimpleType.BOOL,
          "google.protobuf.Duration",
          SimpleType.DURATION,
          "google.protobuf.Timestamp",
          SimpleType.TIMESTAMP,
          "string",
          SimpleType.STRING,
          "bytes",
          SimpleType.BYTES);

  /** The same types by the names the Kubernetes lists library uses. */
  public static final Map<String, CelType> K8S_COMPARABLE =
      ordered(
          "int",
          SimpleType.INT,
          "uint",
          SimpleType.UINT,
          "double",
          SimpleType.DOUBLE,
          "bool",
          SimpleType.BOOL,
          "duration",
          SimpleType.DURATION,
          "timestamp",
          SimpleType.TIMESTAMP,
          "string",
          SimpleType.STRING,
          "bytes",
          SimpleType.BYTES);

  public static final Map<String, CelType> K8S_SUMMABLE =
      ordered(
          "int",
          SimpleType.INT,
          "uint",
          SimpleType.UINT,
          "double",
          SimpleType.DOUBLE,
          "duration",
          SimpleType.DURATION);

  /** Typed overload id -> the id of the binding that runs it. */
  private static final Map<String, String> RUNTIME_IDS = new HashMap<>();

  /** Typed overload ids with a binding of their own, run by it when the checker chose only it. */
  private static final Set<String> BOUND_ALONE = new HashSet<>();

  private TypedOverloads() {}

  /**
   * Runs {@code typedId} by its own binding where the checker resolved a call to it alone (where
   * the result depends on the static type: the sum of an empty list of double is 0.0).
   */
  public static synchronized void boundAlone(String typedId) {
    BOUND_ALONE.add(typedId);
  }

  /** One overload per type, {@code id.apply(typeName)} its id, all run by {@code runtimeId}. */
  public static synchronized List<CelOverloadDecl> declare(
      Map<String, CelType> types,
      Function<String, String> id,
      Function<CelType, CelOverloadDecl> overload,
      String runtimeId) {
    return types.entrySet().stream()
        .map(
            t -> {
              String typedId = id.apply(t.getKey());
              RUNTIME_IDS.put(typedId, runtimeId);
              return overload.apply(t.getValue()).toBuilder().setOverloadId(typedId).build();
            })
        .toList();
  }

  /** The checked AST with calls to typed overloads resolved to their runtime binding. */
  public static synchronized CelAbstractSyntaxTree forRuntime(CelAbstractSyntaxTree ast) {
    Map<Long, CelReference> references = new HashMap<>(ast.getReferenceMap());
    boolean changed = false;
    for (Map.Entry<Long, CelReference> e : references.entrySet()) {
      List<String> ids = e.getValue().overloadIds();
      if (ids.size() == 1 && BOUND_ALONE.contains(ids.get(0))) {
        continue;
      }
      String runtimeId = ids.isEmpty() ? null : RUNTIME_IDS.get(ids.get(0));
      if (runtimeId != null && ids.stream().allMatch(i -> runtimeId.equals(RUNTIME_IDS.get(i)))) {
        e.setValue(
            CelReference.newBuilder()
                .setName(e.getValue().name())
                .addOverloadIds(runtimeId)
                .build());
        changed = true;
      }
    }
    return changed
        ? CelAbstractSyntaxTree.newCheckedAst(
            ast.getExpr(), ast.getSource(), references, ast.getTypeMap())
        : ast;
  }

  private static Map<String, CelType> ordered(Object... namesAndTypes) {
    Map<String, CelType> m = new LinkedHashMap<>();
    for (int i = 0; i < namesAndTypes.length; i += 2) {
      m.put((String) namesAndTypes[i], (CelType) namesAndTypes[i + 1]);
    }
    return Collections.unmodifiableMap(m);
  }
}
