package io.kdra.core.cel.k8slib;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.ListType;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import java.util.ArrayList;
import java.util.List;

/**
 * The Kubernetes {@code regex} library ({@code k8s.io/apiserver/pkg/cel/library/regex.go}): {@code
 * s.find(re)} (the leftmost match or "") and {@code s.findAll(re[, n])}, with Go's {@code
 * FindString}/{@code FindAllString} semantics (an empty match right after a previous match is
 * skipped; {@code n < 0} means all). RE2 syntax through RE2J, as cel-java's {@code matches}.
 * Hand-written: cel-java's regex extension is a different library ({@code regex.extract}...).
 */
public final class KubernetesRegexLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(
        CelFunctionDecl.newFunctionDeclaration(
            "find",
            CelOverloadDecl.newMemberOverload(
                "string_find_string", SimpleType.STRING, SimpleType.STRING, SimpleType.STRING)),
        CelFunctionDecl.newFunctionDeclaration(
            "findAll",
            CelOverloadDecl.newMemberOverload(
                "string_find_all_string",
                ListType.create(SimpleType.STRING),
                SimpleType.STRING,
                SimpleType.STRING),
            CelOverloadDecl.newMemberOverload(
                "string_find_all_string_int",
                ListType.create(SimpleType.STRING),
                SimpleType.STRING,
                SimpleType.STRING,
                SimpleType.INT)));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    runtime.addFunctionBindings(
        CelFunctionBinding.from(
            "string_find_string",
            String.class,
            String.class,
            (s, re) -> {
              Matcher m = compile(re).matcher(s);
              return m.find() ? m.group() : "";
            }),
        CelFunctionBinding.from(
            "string_find_all_string", String.class, String.class, (s, re) -> findAll(s, re, -1)),
        CelFunctionBinding.from(
            "string_find_all_string_int",
            List.of(String.class, String.class, Long.class),
            args -> findAll((String) args[0], (String) args[1], (Long) args[2])));
  }

  static Pattern compile(String regex) throws CelEvaluationException {
    try {
      return Pattern.compile(regex);
    } catch (PatternSyntaxException e) {
      throw new CelEvaluationException("Illegal regex: " + e.getMessage());
    }
  }

  private static List<String> findAll(String s, String regex, long n)
      throws CelEvaluationException {
    Matcher m = compile(regex).matcher(s);
    List<String> result = new ArrayList<>();
    int previousEnd = -1;
    int from = 0;
    while ((n < 0 || result.size() < n) && from <= s.length() && m.find(from)) {
      int start = m.start();
      int end = m.end();
      if (end == start && start == previousEnd) {
        // Go ignores an empty match abutting the previous match and moves on one character
        if (start >= s.length()) {
          break;
        }
        from = start + Character.charCount(s.codePointAt(start));
        continue;
      }
      result.add(m.group());
      previousEnd = end;
      from =
          end == start
              ? (start >= s.length()
                  ? s.length() + 1
                  : start + Character.charCount(s.codePointAt(start)))
              : end;
    }
    return result;
  }
}
