package io.kdra.core.cel.ext;

import com.google.common.primitives.UnsignedLong;
import com.google.protobuf.ByteString;
import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import dev.cel.checker.CelCheckerBuilder;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.CelType;
import dev.cel.common.types.CelTypes;
import dev.cel.common.types.ListType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.TypeType;
import dev.cel.common.values.CelByteString;
import dev.cel.common.values.NullValue;
import dev.cel.compiler.CelCompilerLibrary;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import io.kdra.core.cel.compat.CelValues;
import io.kdra.core.cel.golang.GoFloat;
import io.kdra.core.cel.golang.GoLocalizedFloat;
import io.kdra.core.cel.golang.GoQuantity;
import io.kdra.core.cel.golang.GoQuote;
import io.kdra.core.cel.golang.GoTime;
import io.kdra.core.model.Semver;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code string.format(list)} and {@code strings.quote(string)} of cel-go's strings extension at
 * version 2 ({@code ext/formatting.go}, locale en_US), which the Kubernetes base environment
 * enables. Hand-written: cel-java's strings extension has {@code quote} but no {@code format}. Go's
 * number and string forms are in {@link GoLocalizedFloat}, {@link GoFloat} and {@link GoQuote};
 * cel-go's {@code stringFormatValidator} (a literal format string with a literal argument list
 * checked at compile time) is in the environment's {@code SelectorAstValidator}, through {@link
 * #format} and {@link Args}.
 */
public final class StringFormatLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  public static final String OVERLOAD = "string_format";
  private static final int DEFAULT_PRECISION = 6;

  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(
        CelFunctionDecl.newFunctionDeclaration(
            "format",
            CelOverloadDecl.newMemberOverload(
                OVERLOAD, SimpleType.STRING, SimpleType.STRING, ListType.create(SimpleType.DYN))));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    runtime.addFunctionBindings(
        CelFunctionBinding.from(
            OVERLOAD,
            String.class,
            List.class,
            (format, args) -> {
              try {
                return format(format, new RuntimeArgs(args));
              } catch (FormatException e) {
                throw new CelEvaluationException(e.getMessage());
              }
            }));
  }

  /** A format problem, with the message cel-go gives. */
  public static final class FormatException extends Exception {
    public final int argIndex;

    public FormatException(String message, int argIndex) {
      super(message);
      this.argIndex = argIndex;
    }
  }

  /** The clauses' view of the arguments: values at runtime, static types at compile time. */
  public interface Args {
    int size();

    String string(int index) throws FormatException;

    String decimal(int index) throws FormatException;

    String fixed(int index, int precision) throws FormatException;

    String scientific(int index, int precision) throws FormatException;

    String binary(int index) throws FormatException;

    String hex(int index, boolean upper) throws FormatException;

    String octal(int index) throws FormatException;
  }

  /** cel-go's {@code parseFormatString}; returns the formatted string and counts arguments. */
  public static String format(String format, Args args) throws FormatException {
    byte[] bytes = format.getBytes(StandardCharsets.UTF_8);
    StringBuilder out = new StringBuilder();
    int i = 0;
    int argIndex = 0;
    int literalStart = 0;
    while (i < bytes.length) {
      if (bytes[i] != '%') {
        i++;
        continue;
      }
      out.append(new String(bytes, literalStart, i - literalStart, StandardCharsets.UTF_8));
      if (i + 1 < bytes.length && bytes[i + 1] == '%') {
        out.append('%');
        i += 2;
        literalStart = i;
        continue;
      }
      if (i + 1 >= bytes.length) {
        throw new FormatException("unexpected end of string", -1);
      }
      if (argIndex >= args.size()) {
        throw new FormatException("index " + argIndex + " out of range", -1);
      }
      int j = i + 1;
      Integer precision = null;
      if (bytes[j] == '.') {
        j++;
        int digitsStart = j;
        while (true) {
          if (j >= bytes.length) {
            throw new FormatException(
                "could not parse formatting clause: error while parsing "
                    + "precision: could not find end of precision specifier",
                -1);
          }
          if (bytes[j] < '0' || bytes[j] > '9') {
            break;
          }
          j++;
        }
        String digits = new String(bytes, digitsStart, j - digitsStart, StandardCharsets.US_ASCII);
        try {
          precision = Integer.parseInt(digits);
        } catch (NumberFormatException e) {
          throw new FormatException(
              "could not parse formatting clause: error while parsing "
                  + "precision: error while converting precision to integer: strconv.Atoi: parsing \""
                  + digits
                  + "\": "
                  + (digits.isEmpty() ? "invalid syntax" : "value out of range"),
              -1);
        }
      }
      char clause = (char) (bytes[j] & 0xff);
      j++;
      int p = precision == null ? 6 : precision;
      String value;
      try {
        value =
            switch (clause) {
              case 's' -> args.string(argIndex);
              case 'd' -> args.decimal(argIndex);
              case 'f' -> args.fixed(argIndex, p);
              case 'e' -> args.scientific(argIndex, p);
              case 'b' -> args.binary(argIndex);
              case 'x', 'X' -> args.hex(argIndex, clause == 'X');
              case 'o' -> args.octal(argIndex);
              default ->
                  throw new FormatException(
                      "could not parse formatting clause: "
                          + "unrecognized formatting clause \""
                          + clauseName(bytes, j - 1)
                          + "\"",
                      -1);
            };
      } catch (FormatException e) {
        if (e.getMessage().startsWith("could not parse")) {
          throw e;
        }
        throw new FormatException("error during formatting: " + e.getMessage(), e.argIndex);
      }
      out.append(value);
      argIndex++;
      i = j;
      literalStart = i;
    }
    out.append(
        new String(bytes, literalStart, bytes.length - literalStart, StandardCharsets.UTF_8));
    return out.toString();
  }

  private static String clauseName(byte[] bytes, int at) {
    // Go prints rune(byte): one Latin-1 character
    return String.valueOf((char) (bytes[at] & 0xff));
  }

  /** The runtime arguments. */
  static final class RuntimeArgs implements Args {
    private final List<?> args;

    RuntimeArgs(List<?> args) {
      this.args = args;
    }

    @Override
    public int size() {
      return args.size();
    }

    @Override
    public String string(int index) throws FormatException {
      return formatString(args.get(index));
    }

    @Override
    public String decimal(int index) throws FormatException {
      Object v = args.get(index);
      if (v instanceof Long || v instanceof UnsignedLong) {
        return v.toString();
      }
      throw new FormatException(
          "decimal clause can only be used on integers, was given " + typeName(v), index);
    }

    @Override
    public String fixed(int index, int precision) throws FormatException {
      double d = floatArg(args.get(index), index, "fixed-point clause");
      return GoLocalizedFloat.fixed(d, precision);
    }

    @Override
    public String scientific(int index, int precision) throws FormatException {
      double d = floatArg(args.get(index), index, "scientific clause");
      return GoLocalizedFloat.scientific(d, precision);
    }

    @Override
    public String binary(int index) throws FormatException {
      Object v = args.get(index);
      if (v instanceof Long l) {
        return l < 0 ? "-" + Long.toBinaryString(-l) : Long.toBinaryString(l);
      }
      if (v instanceof UnsignedLong u) {
        return u.bigIntegerValue().toString(2);
      }
      if (v instanceof Boolean b) {
        return b ? "1" : "0";
      }
      throw new FormatException(
          "only integers and bools can be formatted as binary, was given " + typeName(v), index);
    }

    @Override
    public String hex(int index, boolean upper) throws FormatException {
      Object v = args.get(index);
      String s;
      if (v instanceof Long l) {
        s = l < 0 ? "-" + BigInteger.valueOf(l).negate().toString(16) : Long.toHexString(l);
      } else if (v instanceof UnsignedLong u) {
        s = u.bigIntegerValue().toString(16);
      } else if (v instanceof String str) {
        s = hexBytes(str.getBytes(StandardCharsets.UTF_8));
      } else if (v instanceof ByteString b) {
        s = hexBytes(b.toByteArray());
      } else if (v instanceof CelByteString b) {
        s = hexBytes(b.toByteArray());
      } else {
        throw new FormatException(
            "only integers, byte buffers, and strings can be formatted as "
                + "hex, was given "
                + typeName(v),
            index);
      }
      return upper ? s.toUpperCase(Locale.ROOT) : s;
    }

    @Override
    public String octal(int index) throws FormatException {
      Object v = args.get(index);
      if (v instanceof Long l) {
        return l < 0 ? "-" + Long.toOctalString(-l) : Long.toOctalString(l);
      }
      if (v instanceof UnsignedLong u) {
        return u.bigIntegerValue().toString(8);
      }
      throw new FormatException(
          "octal clause can only be used on integers, was given " + typeName(v), index);
    }
  }

  private static double floatArg(Object v, int index, String clause) throws FormatException {
    if (v instanceof Double d) {
      return d;
    }
    if (v instanceof String s) {
      switch (s) {
        case "NaN":
          return Double.NaN;
        case "Infinity":
          return Double.POSITIVE_INFINITY;
        case "-Infinity":
          return Double.NEGATIVE_INFINITY;
        default:
          break;
      }
    }
    throw new FormatException(
        clause + " can only be used on doubles, was given " + typeName(v), index);
  }

  private static String hexBytes(byte[] bytes) {
    StringBuilder sb = new StringBuilder();
    for (byte b : bytes) {
      sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
    }
    return sb.toString();
  }

  /** {@code %s}: cel-go's {@code FormatString}. */
  static String formatString(Object v) throws FormatException {
    if (v instanceof List<?> list) {
      List<String> parts = new ArrayList<>();
      for (Object e : list) {
        parts.add(quoteForCel(e, nested(e)));
      }
      return "[" + String.join(", ", parts) + "]";
    }
    if (v instanceof Map<?, ?> map) {
      List<String[]> pairs = new ArrayList<>();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        Object key = e.getKey();
        String keyText;
        if (key instanceof String
            || key instanceof Boolean
            || key instanceof Long
            || key instanceof UnsignedLong) {
          keyText = quoteForCel(key, scalar(key));
        } else {
          throw new FormatException(
              "no formatting function for map key of type " + typeName(key), -1);
        }
        pairs.add(new String[] {keyText, quoteForCel(e.getValue(), nested(e.getValue()))});
      }
      pairs.sort((a, b) -> CelValues.compareCodePoints(a[0], b[0]));
      List<String> parts = new ArrayList<>();
      for (String[] p : pairs) {
        parts.add(p[0] + ":" + p[1]);
      }
      return "{" + String.join(", ", parts) + "}";
    }
    return scalar(v);
  }

  /** A list element or map value: cel-go's {@code clauseForType}. */
  private static String nested(Object v) throws FormatException {
    if (v instanceof Double d) {
      if (d.isNaN() || d.isInfinite()) {
        return d.isNaN() ? "NaN" : (d > 0 ? "+Inf" : "-Inf");
      }
      return String.format(Locale.ROOT, "%." + DEFAULT_PRECISION + "f", d);
    }
    if (v instanceof TypeType t) {
      return CelTypes.format(t.type());
    }
    if (v instanceof Duration || v instanceof java.time.Duration) {
      return "duration(" + GoQuote.string(scalar(v)) + ")";
    }
    if (v instanceof Timestamp || v instanceof Instant) {
      return "timestamp(" + GoQuote.string(scalar(v)) + ")";
    }
    if (v instanceof CelType t) {
      return t.name();
    }
    if (v instanceof List<?> || v instanceof Map<?, ?>) {
      return formatString(v);
    }
    if (v instanceof Long
        || v instanceof UnsignedLong
        || v instanceof String
        || v instanceof ByteString
        || v instanceof CelByteString
        || v instanceof Boolean
        || v == null
        || v instanceof NullValue) {
      return scalar(v);
    }
    throw new FormatException("no formatting function for " + typeName(v), -1);
  }

  private static String quoteForCel(Object v, String text) {
    if (v instanceof String) {
      return GoQuote.string(text);
    }
    if (v instanceof ByteString || v instanceof CelByteString) {
      return "b" + GoQuote.string(text);
    }
    if (v instanceof Double d && (d.isNaN() || d.isInfinite())) {
      return GoQuote.string(text);
    }
    return text;
  }

  private static String scalar(Object v) throws FormatException {
    if (v == null || v instanceof NullValue || v instanceof com.google.protobuf.NullValue) {
      return "null";
    }
    if (v instanceof String s) {
      return s;
    }
    if (v instanceof Boolean || v instanceof Long || v instanceof UnsignedLong) {
      return v.toString();
    }
    if (v instanceof Double d) {
      return GoFloat.shortest(d);
    }
    if (v instanceof ByteString b) {
      return b.toStringUtf8();
    }
    if (v instanceof CelByteString b) {
      return new String(b.toByteArray(), StandardCharsets.UTF_8);
    }
    if (v instanceof Duration d) {
      return GoFloat.duration(java.time.Duration.ofSeconds(d.getSeconds(), d.getNanos()));
    }
    if (v instanceof java.time.Duration d) {
      return GoFloat.duration(d);
    }
    if (v instanceof Timestamp t) {
      return GoTime.formatRfc3339Nano(Instant.ofEpochSecond(t.getSeconds(), t.getNanos()));
    }
    if (v instanceof Instant t) {
      return GoTime.formatRfc3339Nano(t);
    }
    if (v instanceof TypeType t) {
      return CelTypes.format(t.type());
    }
    if (v instanceof CelType t) {
      return t.name();
    }
    throw new FormatException(
        "string clause can only be used on strings, bools, bytes, ints, "
            + "doubles, maps, lists, types, durations, and timestamps, was given "
            + typeName(v),
        -1);
  }

  static String typeName(Object v) {
    if (v == null || v instanceof NullValue || v instanceof com.google.protobuf.NullValue) {
      return "null_type";
    }
    if (v instanceof String) {
      return "string";
    }
    if (v instanceof Long) {
      return "int";
    }
    if (v instanceof UnsignedLong) {
      return "uint";
    }
    if (v instanceof Double) {
      return "double";
    }
    if (v instanceof Boolean) {
      return "bool";
    }
    if (v instanceof ByteString || v instanceof CelByteString) {
      return "bytes";
    }
    if (v instanceof List<?>) {
      return "list";
    }
    if (v instanceof Map<?, ?>) {
      return "map";
    }
    if (v instanceof Duration || v instanceof java.time.Duration) {
      return "google.protobuf.Duration";
    }
    if (v instanceof Timestamp || v instanceof Instant) {
      return "google.protobuf.Timestamp";
    }
    if (v instanceof CelType) {
      return "type";
    }
    if (v instanceof GoQuantity) {
      return "kubernetes.Quantity";
    }
    if (v instanceof Semver) {
      return "kubernetes.Semver";
    }
    return v.getClass().getSimpleName();
  }
}
