package io.kdra.core.cel;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.ast.CelExpr.CelCall;
import dev.cel.common.types.CelKind;
import dev.cel.common.types.CelType;
import dev.cel.common.types.CelTypes;
import dev.cel.common.types.SimpleType;
import io.kdra.core.cel.cost.CostPlan;
import io.kdra.core.cel.ext.SortByLibrary;
import io.kdra.core.cel.ext.StringFormatLibrary;
import io.kdra.core.cel.ext.StringFormatLibrary.FormatException;
import io.kdra.core.cel.k8slib.KubernetesListsLibrary;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The checks the Kubernetes base environment runs on a type-checked selector after the checker,
 * cel-go's AST validators, which cel-java lacks: homogeneous list and map literals (calls to {@code
 * format} exempt), literal regular expressions of {@code matches} (and of {@code find} / {@code
 * findAll}, which upstream compiles when the program is built), literal {@code duration()} / {@code
 * timestamp()} arguments, and literal {@code string.format} calls; and the one literal check of
 * cel-go's parser that cel-java's lacks, a double literal out of range. Reports the first problem
 * as cel-go words it.
 */
final class SelectorAstValidator {

  /** A problem at an expression node. */
  record Issue(long exprId, String message) {}

  private final CelAbstractSyntaxTree ast;
  private final Predicate<CelExpr> literalCallIsValid;
  private Issue issue;

  /**
   * @param literalCallIsValid evaluates a {@code duration}/{@code timestamp} call with a literal
   *     argument, true when it succeeds
   */
  private SelectorAstValidator(CelAbstractSyntaxTree ast, Predicate<CelExpr> literalCallIsValid) {
    this.ast = ast;
    this.literalCallIsValid = literalCallIsValid;
  }

  static Optional<Issue> validate(
      CelAbstractSyntaxTree ast, Predicate<CelExpr> literalCallIsValid) {
    SelectorAstValidator v = new SelectorAstValidator(ast, literalCallIsValid);
    v.visit(ast.getExpr(), false);
    return Optional.ofNullable(v.issue);
  }

  private void report(long id, String message) {
    if (issue == null) {
      issue = new Issue(id, message);
    }
  }

  private void visit(CelExpr e, boolean inFormat) {
    switch (e.exprKind().getKind()) {
      case CALL -> {
        CelCall call = e.call();
        checkCall(e, call);
        boolean nestedInFormat = inFormat || call.function().equals("format");
        call.target().ifPresent(t -> visit(t, nestedInFormat));
        call.args().forEach(a -> visit(a, nestedInFormat));
      }
      case LIST -> {
        if (!inFormat) {
          homogeneousList(e);
        }
        e.list().elements().forEach(x -> visit(x, inFormat));
      }
      case MAP -> {
        if (!inFormat) {
          homogeneousMap(e);
        }
        e.map()
            .entries()
            .forEach(
                x -> {
                  visit(x.key(), inFormat);
                  visit(x.value(), inFormat);
                });
      }
      case CONSTANT -> {
        // cel-go's parser refuses a double literal out of range (1e400); cel-java reads +Inf
        if (e.constant().getKind() == CelConstant.Kind.DOUBLE_VALUE
            && Double.isInfinite(e.constant().doubleValue())) {
          report(e.id(), "invalid double literal");
        }
      }
      case SELECT -> visit(e.select().operand(), inFormat);
      case STRUCT -> e.struct().entries().forEach(x -> visit(x.value(), inFormat));
      case COMPREHENSION -> {
        var c = e.comprehension();
        visit(c.iterRange(), inFormat);
        visit(c.accuInit(), inFormat);
        visit(c.loopCondition(), inFormat);
        visit(c.loopStep(), inFormat);
        visit(c.result(), inFormat);
      }
      default -> {}
    }
  }

  private CelType typeOf(CelExpr e) {
    return ast.getType(e.id()).orElse(SimpleType.DYN);
  }

  private void homogeneousList(CelExpr e) {
    List<CelExpr> elements = e.list().elements();
    Set<Integer> optional = Set.copyOf(e.list().optionalIndices());
    CelType first = null;
    for (int i = 0; i < elements.size(); i++) {
      CelType t = typeOf(elements.get(i));
      if (optional.contains(i) && !t.parameters().isEmpty()) {
        t = t.parameters().get(0);
      }
      if (first == null) {
        first = t;
      } else if (!first.equals(t)) {
        mismatch(elements.get(i).id(), first, t);
        return;
      }
    }
  }

  private void homogeneousMap(CelExpr e) {
    CelType keyType = null;
    CelType valueType = null;
    for (var entry : e.map().entries()) {
      CelType k = typeOf(entry.key());
      CelType v = typeOf(entry.value());
      if (entry.optionalEntry() && !v.parameters().isEmpty()) {
        v = v.parameters().get(0);
      }
      if (keyType == null) {
        keyType = k;
        valueType = v;
        continue;
      }
      if (!keyType.equals(k)) {
        mismatch(entry.key().id(), keyType, k);
      }
      if (!valueType.equals(v)) {
        mismatch(entry.value().id(), valueType, v);
      }
    }
  }

  private void mismatch(long id, CelType expected, CelType actual) {
    report(id, "expected type '" + typeName(expected) + "' but found '" + typeName(actual) + "'");
  }

  private void checkCall(CelExpr e, CelCall call) {
    String fn = call.function();
    List<CelExpr> args = call.args();
    switch (fn) {
      case "matches" -> {
        if (!args.isEmpty() && isStringLiteral(args.get(0)) && !compiles(stringOf(args.get(0)))) {
          report(args.get(0).id(), "invalid matches argument");
        }
      }
      case "find", "findAll" -> {
        if (call.target().isPresent() && !args.isEmpty() && isStringLiteral(args.get(0))) {
          try {
            Pattern.compile(stringOf(args.get(0)));
          } catch (PatternSyntaxException ex) {
            report(
                e.id(),
                "program instantiation failed: error parsing regexp: " + ex.getDescription());
          }
        }
      }
      case "duration", "timestamp" -> {
        if (!args.isEmpty()
            && args.get(0).exprKind().getKind() == CelExpr.ExprKind.Kind.CONSTANT
            && !literalCallIsValid.test(e)) {
          report(args.get(0).id(), "invalid " + fn + " argument");
        }
      }
      case "format" -> checkFormat(e, call);
      case "sum", "min", "max", "isSorted" -> {
        if (call.target().isPresent() && args.isEmpty()) {
          checkElementKind(
              e,
              fn,
              typeOf(call.target().get()),
              fn.equals("sum")
                  ? KubernetesListsLibrary.SUMMABLE_KINDS
                  : KubernetesListsLibrary.COMPARABLE_KINDS);
        }
      }
      case SortByLibrary.FUNCTION -> {
        if (args.size() == 1) {
          checkElementKind(
              e, "sortBy", typeOf(args.get(0)), KubernetesListsLibrary.COMPARABLE_KINDS);
        }
      }
      default -> {}
    }
    if (CostPlan.CONVERSIONS.contains(fn)
        && call.target().isEmpty()
        && args.size() == 1
        && isConstant(args.get(0))
        && !literalCallIsValid.test(e)) {
      // cel-go's planner (OptOptimize) evaluates conversions of constants when it builds the
      // program; an error there fails the compilation
      report(e.id(), "program instantiation failed: constant " + fn + "() conversion fails");
    }
  }

  /** What cel-go's planner folds to a constant: literals, literal lists and maps, conversions. */
  private static boolean isConstant(CelExpr e) {
    return switch (e.exprKind().getKind()) {
      case CONSTANT -> true;
      case LIST ->
          e.list().optionalIndices().isEmpty()
              && e.list().elements().stream().allMatch(SelectorAstValidator::isConstant);
      case MAP ->
          e.map().entries().stream()
              .allMatch(x -> !x.optionalEntry() && isConstant(x.key()) && isConstant(x.value()));
      case CALL ->
          CostPlan.CONVERSIONS.contains(e.call().function())
              && e.call().target().isEmpty()
              && e.call().args().size() == 1
              && isConstant(e.call().args().get(0));
      default -> false;
    };
  }

  /**
   * Whether the checker typed the expression as {@code any}: attribute values are declared so, as
   * upstream does, and the type flows through lists, indexing and conditionals as in cel-go.
   */
  private boolean isAny(CelExpr e) {
    return typeOf(e).kind() == CelKind.ANY;
  }

  /** A type as cel-go prints it ({@code any}, not the well-known message's name). */
  static String typeName(CelType t) {
    return CelTypes.format(t).replace("google.protobuf.Any", "any");
  }

  /** What upstream's typed overloads (one per element type) accept. */
  private void checkElementKind(CelExpr e, String fn, CelType listType, Set<CelKind> allowed) {
    if (listType.kind() != CelKind.LIST || listType.parameters().isEmpty()) {
      return;
    }
    CelKind element = listType.parameters().get(0).kind();
    if (element != CelKind.DYN
        && element != CelKind.ANY
        && element != CelKind.TYPE_PARAM
        && !allowed.contains(element)) {
      report(
          e.id(),
          "found no matching overload for '" + fn + "' applied to '" + typeName(listType) + ".()'");
    }
  }

  private static boolean isStringLiteral(CelExpr e) {
    return e.exprKind().getKind() == CelExpr.ExprKind.Kind.CONSTANT
        && e.constant().getKind() == CelConstant.Kind.STRING_VALUE;
  }

  private static String stringOf(CelExpr e) {
    return e.constant().stringValue();
  }

  private static boolean compiles(String regex) {
    try {
      Pattern.compile(regex);
      return true;
    } catch (PatternSyntaxException e) {
      return false;
    }
  }

  private void checkFormat(CelExpr e, CelCall call) {
    if (call.target().isEmpty()
        || !isStringLiteral(call.target().get())
        || call.args().size() != 1
        || call.args().get(0).exprKind().getKind() != CelExpr.ExprKind.Kind.LIST) {
      return;
    }
    boolean isStringFormat =
        ast.getReference(e.id())
            .map(
                r ->
                    r.overloadIds().isEmpty()
                        || r.overloadIds().contains(StringFormatLibrary.OVERLOAD))
            .orElse(true);
    if (!isStringFormat) {
      return;
    }
    List<CelExpr> elements = call.args().get(0).list().elements();
    StaticArgs args = new StaticArgs(elements);
    try {
      StringFormatLibrary.format(stringOf(call.target().get()), args);
    } catch (FormatException ex) {
      report(ex.argIndex >= 0 ? elements.get(ex.argIndex).id() : e.id(), ex.getMessage());
      return;
    }
    if (elements.size() > args.requested) {
      report(
          e.id(),
          "too many arguments supplied to string.format (expected "
              + args.requested
              + ", got "
              + elements.size()
              + ")");
    }
  }

  /** The format clauses checked against the static types of a literal argument list. */
  private final class StaticArgs implements StringFormatLibrary.Args {
    private final List<CelExpr> elements;
    int requested;

    StaticArgs(List<CelExpr> elements) {
      this.elements = elements;
    }

    @Override
    public int size() {
      return elements.size();
    }

    private String check(int index, String clause, CelKind... kinds) throws FormatException {
      requested = Math.max(requested, index + 1);
      CelType t = typeOf(elements.get(index));
      if (isAny(elements.get(index))) {
        throw new FormatException(clause + ", was given any", index);
      }
      if (t.kind() == CelKind.DYN || Set.of(kinds).contains(t.kind())) {
        return "";
      }
      throw new FormatException(clause + ", was given " + typeName(t), index);
    }

    @Override
    public String string(int index) throws FormatException {
      requested = Math.max(requested, index + 1);
      Optional<CelExpr> bad = badForString(elements.get(index));
      if (bad.isPresent()) {
        throw new FormatException(
            "string clause can only be used on strings, bools, bytes, "
                + "ints, doubles, maps, lists, types, durations, and timestamps, was given "
                + typeName(typeOf(bad.get())),
            index);
      }
      return "";
    }

    private Optional<CelExpr> badForString(CelExpr e) {
      if (isAny(e)) {
        return Optional.of(e);
      }
      CelKind k = typeOf(e).kind();
      if (k != CelKind.DYN
          && !Set.of(
                  CelKind.LIST,
                  CelKind.MAP,
                  CelKind.INT,
                  CelKind.UINT,
                  CelKind.DOUBLE,
                  CelKind.BOOL,
                  CelKind.STRING,
                  CelKind.TIMESTAMP,
                  CelKind.BYTES,
                  CelKind.DURATION,
                  CelKind.TYPE,
                  CelKind.NULL_TYPE)
              .contains(k)) {
        return Optional.of(e);
      }
      if (e.exprKind().getKind() == CelExpr.ExprKind.Kind.LIST) {
        for (CelExpr x : e.list().elements()) {
          Optional<CelExpr> bad = badForString(x);
          if (bad.isPresent()) {
            return bad;
          }
        }
      }
      if (e.exprKind().getKind() == CelExpr.ExprKind.Kind.MAP) {
        for (var entry : e.map().entries()) {
          Optional<CelExpr> bad = badForString(entry.key());
          if (bad.isEmpty()) {
            bad = badForString(entry.value());
          }
          if (bad.isPresent()) {
            return bad;
          }
        }
      }
      return Optional.empty();
    }

    @Override
    public String decimal(int index) throws FormatException {
      return check(index, "decimal clause can only be used on integers", CelKind.INT, CelKind.UINT);
    }

    @Override
    public String fixed(int index, int precision) throws FormatException {
      return check(
          index, "fixed-point clause can only be used on doubles", CelKind.DOUBLE, CelKind.STRING);
    }

    @Override
    public String scientific(int index, int precision) throws FormatException {
      return check(
          index, "scientific clause can only be used on doubles", CelKind.DOUBLE, CelKind.STRING);
    }

    @Override
    public String binary(int index) throws FormatException {
      return check(
          index,
          "only integers and bools can be formatted as binary",
          CelKind.INT,
          CelKind.UINT,
          CelKind.BOOL);
    }

    @Override
    public String hex(int index, boolean upper) throws FormatException {
      return check(
          index,
          "only integers, byte buffers, and strings can be formatted as hex",
          CelKind.INT,
          CelKind.UINT,
          CelKind.STRING,
          CelKind.BYTES);
    }

    @Override
    public String octal(int index) throws FormatException {
      return check(index, "octal clause can only be used on integers", CelKind.INT, CelKind.UINT);
    }
  }
}
