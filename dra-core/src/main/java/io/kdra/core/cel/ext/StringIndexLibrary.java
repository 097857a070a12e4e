package io.kdra.core.cel.ext;

import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * {@code indexOf} and {@code lastIndexOf} on strings as cel-go's strings extension computes them
 * (code points; an offset past the end gives -1, a negative one an error; an empty substring gives
 * the offset, clamped to the end, as of cel-go 0.29). Hand-written because cel-java's versions fail
 * on offsets past the end.
 */
public final class StringIndexLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(
        CelFunctionDecl.newFunctionDeclaration(
            "indexOf",
            CelOverloadDecl.newMemberOverload(
                "string_index_of_string", SimpleType.INT, SimpleType.STRING, SimpleType.STRING),
            CelOverloadDecl.newMemberOverload(
                "string_index_of_string_int",
                SimpleType.INT,
                SimpleType.STRING,
                SimpleType.STRING,
                SimpleType.INT)),
        CelFunctionDecl.newFunctionDeclaration(
            "lastIndexOf",
            CelOverloadDecl.newMemberOverload(
                "string_last_index_of_string",
                SimpleType.INT,
                SimpleType.STRING,
                SimpleType.STRING),
            CelOverloadDecl.newMemberOverload(
                "string_last_index_of_string_int",
                SimpleType.INT,
                SimpleType.STRING,
                SimpleType.STRING,
                SimpleType.INT)));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    runtime.addFunctionBindings(
        CelFunctionBinding.from(
            "string_index_of_string", String.class, String.class, (s, sub) -> indexOf(s, sub, 0)),
        CelFunctionBinding.from(
            "string_index_of_string_int",
            List.of(String.class, String.class, Long.class),
            args -> indexOf((String) args[0], (String) args[1], (Long) args[2])),
        CelFunctionBinding.from(
            "string_last_index_of_string",
            String.class,
            String.class,
            StringIndexLibrary::lastIndexOf),
        CelFunctionBinding.from(
            "string_last_index_of_string_int",
            List.of(String.class, String.class, Long.class),
            args -> lastIndexOf((String) args[0], (String) args[1], (Long) args[2])));
  }

  static long indexOf(String s, String sub, long offset) throws CelEvaluationException {
    if (offset < 0) {
      throw new CelEvaluationException("index out of range: " + offset);
    }
    int[] runes = s.codePoints().toArray();
    if (sub.isEmpty()) {
      // cel-go 0.29: the empty string matches at the offset, clamped to the end of the string
      return Math.min(offset, runes.length);
    }
    int[] subRunes = sub.codePoints().toArray();
    if (offset >= runes.length) {
      return -1;
    }
    for (int i = (int) offset; i < runes.length - (subRunes.length - 1); i++) {
      if (matchesAt(runes, subRunes, i)) {
        return i;
      }
    }
    return -1;
  }

  static long lastIndexOf(String s, String sub) throws CelEvaluationException {
    int length = s.codePointCount(0, s.length());
    if (sub.isEmpty()) {
      return length;
    }
    if (s.getBytes(StandardCharsets.UTF_8).length < sub.getBytes(StandardCharsets.UTF_8).length) {
      return -1;
    }
    return lastIndexOf(s, sub, length - 1);
  }

  static long lastIndexOf(String s, String sub, long offset) throws CelEvaluationException {
    if (offset < 0) {
      throw new CelEvaluationException("index out of range: " + offset);
    }
    int[] runes = s.codePoints().toArray();
    if (sub.isEmpty()) {
      return Math.min(offset, runes.length);
    }
    int[] subRunes = sub.codePoints().toArray();
    if (offset >= runes.length) {
      return -1;
    }
    long off = Math.min(offset, runes.length - subRunes.length);
    for (long i = off; i >= 0; i--) {
      if (matchesAt(runes, subRunes, (int) i)) {
        return i;
      }
    }
    return -1;
  }

  private static boolean matchesAt(int[] runes, int[] sub, int at) {
    for (int j = 0; j < sub.length; j++) {
      if (runes[at + j] != sub[j]) {
        return false;
      }
    }
    return true;
  }
}
