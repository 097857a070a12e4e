package io.kdra.core.cel.k8slib;

import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.CelType;
import dev.cel.common.types.OpaqueType;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import dev.cel.runtime.RuntimeEquality;
import io.kdra.core.cel.golang.GoQuantity;
import io.kdra.core.model.Semver;
import java.util.List;

/**
 * The Kubernetes CEL functions that the DRA selector environment offers beyond standard CEL: the
 * {@code quantity} library ({@code k8s.io/apiserver/pkg/cel/library/quantity.go}) and the {@code
 * semver} library ({@code semverlib.go}), with the same names, overloads and errors. Values are
 * {@link GoQuantity} (Go's representation, see there) and {@link Semver} objects, opaque to CEL.
 */
public final class KubernetesCelLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  public static final CelType QUANTITY = OpaqueType.create("kubernetes.Quantity");
  public static final CelType SEMVER = OpaqueType.create("kubernetes.Semver");

  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(
        global("quantity", QUANTITY, "string_to_quantity", SimpleType.STRING),
        global("isQuantity", SimpleType.BOOL, "is_quantity_string", SimpleType.STRING),
        member("isInteger", SimpleType.BOOL, "quantity_is_integer", QUANTITY),
        member("asInteger", SimpleType.INT, "quantity_get_integer", QUANTITY),
        member("asApproximateFloat", SimpleType.DOUBLE, "quantity_get_float", QUANTITY),
        // a global function upstream: sign(q), not q.sign()
        global("sign", SimpleType.INT, "quantity_sign", QUANTITY),
        CelFunctionDecl.newFunctionDeclaration(
            "add",
            CelOverloadDecl.newMemberOverload("quantity_add", QUANTITY, QUANTITY, QUANTITY),
            CelOverloadDecl.newMemberOverload(
                "quantity_add_int", QUANTITY, QUANTITY, SimpleType.INT)),
        CelFunctionDecl.newFunctionDeclaration(
            "sub",
            CelOverloadDecl.newMemberOverload("quantity_sub", QUANTITY, QUANTITY, QUANTITY),
            CelOverloadDecl.newMemberOverload(
                "quantity_sub_int", QUANTITY, QUANTITY, SimpleType.INT)),
        CelFunctionDecl.newFunctionDeclaration(
            "semver",
            CelOverloadDecl.newGlobalOverload("string_to_semver", SEMVER, SimpleType.STRING),
            CelOverloadDecl.newGlobalOverload(
                "string_bool_to_semver", SEMVER, SimpleType.STRING, SimpleType.BOOL)),
        CelFunctionDecl.newFunctionDeclaration(
            "isSemver",
            CelOverloadDecl.newGlobalOverload(
                "is_semver_string", SimpleType.BOOL, SimpleType.STRING),
            CelOverloadDecl.newGlobalOverload(
                "is_semver_string_bool", SimpleType.BOOL, SimpleType.STRING, SimpleType.BOOL)),
        member("major", SimpleType.INT, "semver_major", SEMVER),
        member("minor", SimpleType.INT, "semver_minor", SEMVER),
        member("patch", SimpleType.INT, "semver_patch", SEMVER),
        CelFunctionDecl.newFunctionDeclaration(
            "isGreaterThan",
            CelOverloadDecl.newMemberOverload(
                "quantity_is_greater_than", SimpleType.BOOL, QUANTITY, QUANTITY),
            CelOverloadDecl.newMemberOverload(
                "semver_is_greater_than", SimpleType.BOOL, SEMVER, SEMVER)),
        CelFunctionDecl.newFunctionDeclaration(
            "isLessThan",
            CelOverloadDecl.newMemberOverload(
                "quantity_is_less_than", SimpleType.BOOL, QUANTITY, QUANTITY),
            CelOverloadDecl.newMemberOverload(
                "semver_is_less_than", SimpleType.BOOL, SEMVER, SEMVER)),
        CelFunctionDecl.newFunctionDeclaration(
            "compareTo",
            CelOverloadDecl.newMemberOverload(
                "quantity_compare_to", SimpleType.INT, QUANTITY, QUANTITY),
            CelOverloadDecl.newMemberOverload(
                "semver_compare_to", SimpleType.INT, SEMVER, SEMVER)));
  }

  private static CelFunctionDecl global(String name, CelType result, String id, CelType arg) {
    return CelFunctionDecl.newFunctionDeclaration(
        name, CelOverloadDecl.newGlobalOverload(id, result, arg));
  }

  private static CelFunctionDecl member(String name, CelType result, String id, CelType self) {
    return CelFunctionDecl.newFunctionDeclaration(
        name, CelOverloadDecl.newMemberOverload(id, result, self));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    runtime.addFunctionBindings(
        List.of(
            CelFunctionBinding.from(
                "string_to_quantity", String.class, KubernetesCelLibrary::parseQuantity),
            CelFunctionBinding.from(
                "is_quantity_string", String.class, KubernetesCelLibrary::isQuantity),
            CelFunctionBinding.from("quantity_is_integer", GoQuantity.class, GoQuantity::isInteger),
            CelFunctionBinding.from(
                "quantity_get_integer", GoQuantity.class, KubernetesCelLibrary::asInteger),
            CelFunctionBinding.from(
                "quantity_get_float", GoQuantity.class, GoQuantity::approximateFloat),
            CelFunctionBinding.from("quantity_sign", GoQuantity.class, q -> (long) q.sign()),
            CelFunctionBinding.from(
                "quantity_add", GoQuantity.class, GoQuantity.class, GoQuantity::add),
            CelFunctionBinding.from(
                "quantity_add_int",
                GoQuantity.class,
                Long.class,
                (q, i) -> q.add(GoQuantity.ofInt(i))),
            CelFunctionBinding.from(
                "quantity_sub", GoQuantity.class, GoQuantity.class, GoQuantity::sub),
            CelFunctionBinding.from(
                "quantity_sub_int",
                GoQuantity.class,
                Long.class,
                (q, i) -> q.sub(GoQuantity.ofInt(i))),
            CelFunctionBinding.from(
                "quantity_is_greater_than",
                GoQuantity.class,
                GoQuantity.class,
                (a, b) -> a.cmp(b) > 0),
            CelFunctionBinding.from(
                "quantity_is_less_than",
                GoQuantity.class,
                GoQuantity.class,
                (a, b) -> a.cmp(b) < 0),
            CelFunctionBinding.from(
                "quantity_compare_to",
                GoQuantity.class,
                GoQuantity.class,
                (a, b) -> (long) a.cmp(b)),
            CelFunctionBinding.from("string_to_semver", String.class, s -> parseSemver(s, false)),
            CelFunctionBinding.from(
                "string_bool_to_semver",
                String.class,
                Boolean.class,
                KubernetesCelLibrary::parseSemver),
            CelFunctionBinding.from(
                "is_semver_string", String.class, s -> Semver.isSemver(s, false)),
            CelFunctionBinding.from(
                "is_semver_string_bool", String.class, Boolean.class, Semver::isSemver),
            CelFunctionBinding.from("semver_major", Semver.class, Semver::major),
            CelFunctionBinding.from("semver_minor", Semver.class, Semver::minor),
            CelFunctionBinding.from("semver_patch", Semver.class, Semver::patch),
            CelFunctionBinding.from(
                "semver_is_greater_than", Semver.class, Semver.class, (a, b) -> a.compareTo(b) > 0),
            CelFunctionBinding.from(
                "semver_is_less_than", Semver.class, Semver.class, (a, b) -> a.compareTo(b) < 0),
            CelFunctionBinding.from(
                "semver_compare_to",
                Semver.class,
                Semver.class,
                (a, b) -> (long) Integer.signum(a.compareTo(b)))));
  }

  /**
   * {@code ==} as upstream's Kubernetes values answer it: a quantity compares only with a quantity,
   * and not with an add()/sub() result on the right (a {@code *Quantity} there, which {@code
   * Quantity.Equal} answers "no such overload"); semvers by precedence (build metadata ignored);
   * everything else as standard CEL.
   */
  public static boolean equal(Object a, Object b, RuntimeEquality standard)
      throws CelEvaluationException {
    if (a instanceof GoQuantity qa) {
      if (!(b instanceof GoQuantity qb) || qb.isPointer()) {
        throw new CelEvaluationException("no such overload");
      }
      return qa.equalValue(qb);
    }
    if (b instanceof GoQuantity) {
      return false;
    }
    if (a instanceof KubernetesFormats.NamedFormat
        && !(b instanceof KubernetesFormats.NamedFormat)) {
      // upstream's Format.Equal: no such overload for anything but a format on the right
      throw new CelEvaluationException("no such overload");
    }
    if (a instanceof Semver sa && b instanceof Semver sb) {
      // blang/semver's Equals: precedence only, build metadata ignored
      return sa.compareTo(sb) == 0;
    }
    return standard.objectEquals(a, b);
  }

  private static GoQuantity parseQuantity(String text) throws CelEvaluationException {
    try {
      return GoQuantity.parse(text);
    } catch (IllegalArgumentException e) {
      throw new CelEvaluationException(e.getMessage());
    }
  }

  private static boolean isQuantity(String text) {
    try {
      GoQuantity.parse(text);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static Long asInteger(GoQuantity q) throws CelEvaluationException {
    Long v = q.asInt64();
    if (v == null) {
      throw new CelEvaluationException("cannot convert value to integer");
    }
    return v;
  }

  private static Semver parseSemver(String text, boolean normalize) throws CelEvaluationException {
    try {
      return normalize ? Semver.parseNormalized(text) : Semver.parse(text);
    } catch (IllegalArgumentException e) {
      throw new CelEvaluationException("could not parse " + text + " as semver: " + e.getMessage());
    }
  }
}
