package io.kdra.core.cel.golang;

/**
 * Go's {@code strconv.Quote} (and {@code %q}), of a string or of a byte string (held one byte per
 * char, as ISO-8859-1: valid UTF-8 runes as {@link #string} writes them, other bytes as {@code
 * \xNN}).
 */
public final class GoQuote {

  private GoQuote() {}

  /** Go's {@code %q}: printable characters as they are, others escaped. */
  public static String string(String s) {
    StringBuilder sb = new StringBuilder("\"");
    s.codePoints().forEach(c -> appendRune(sb, c));
    return sb.append('"').toString();
  }

  /** One rune as {@code strconv.Quote} writes it. */
  static void appendRune(StringBuilder sb, int c) {
    switch (c) {
      case '"' -> sb.append("\\\"");
      case '\\' -> sb.append("\\\\");
      case '\n' -> sb.append("\\n");
      case '\t' -> sb.append("\\t");
      case '\r' -> sb.append("\\r");
      case 0x07 -> sb.append("\\a");
      case '\b' -> sb.append("\\b");
      case '\f' -> sb.append("\\f");
      case 0x0b -> sb.append("\\v");
      default -> {
        if (isPrintable(c)) {
          sb.appendCodePoint(c);
        } else if (c < 0x80) {
          sb.append(String.format("\\x%02x", c));
        } else if (c <= 0xffff) {
          sb.append(String.format("\\u%04x", c));
        } else {
          sb.append(String.format("\\U%08x", c));
        }
      }
    }
  }

  private static boolean isPrintable(int c) {
    if (c == ' ') {
      return true;
    }
    int type = Character.getType(c);
    return !(Character.isWhitespace(c)
        || Character.isSpaceChar(c)
        || type == Character.CONTROL
        || type == Character.FORMAT
        || type == Character.SURROGATE
        || type == Character.PRIVATE_USE
        || type == Character.UNASSIGNED
        || type == Character.LINE_SEPARATOR
        || type == Character.PARAGRAPH_SEPARATOR);
  }

  /** A byte string held one byte per char. */
  static String bytes(String latin1) {
    StringBuilder sb = new StringBuilder("\"");
    int i = 0;
    while (i < latin1.length()) {
      int b = latin1.charAt(i);
      int width = width(latin1, i);
      if (width == 0) {
        sb.append(String.format("\\x%02x", b));
        i++;
        continue;
      }
      int rune = width == 1 ? b : b & (0xff >> (width + 1));
      for (int k = 1; k < width; k++) {
        rune = rune << 6 | (latin1.charAt(i + k) & 0x3f);
      }
      appendRune(sb, rune);
      i += width;
    }
    return sb.append('"').toString();
  }

  /** The width of the valid UTF-8 sequence at i, 0 where it is invalid (Go's RuneError). */
  private static int width(String s, int i) {
    int b0 = s.charAt(i);
    if (b0 < 0x80) {
      return 1;
    }
    int width;
    int min;
    int max = 0xbf;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      width = 2;
      min = 0x80;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      width = 3;
      min = b0 == 0xe0 ? 0xa0 : 0x80;
      max = b0 == 0xed ? 0x9f : 0xbf;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      width = 4;
      min = b0 == 0xf0 ? 0x90 : 0x80;
      max = b0 == 0xf4 ? 0x8f : 0xbf;
    } else {
      return 0;
    }
    if (i + width > s.length()) {
      return 0;
    }
    int b1 = s.charAt(i + 1);
    if (b1 < min || b1 > max) {
      return 0;
    }
    for (int k = 2; k < width; k++) {
      int b = s.charAt(i + k);
      if (b < 0x80 || b > 0xbf) {
        return 0;
      }
    }
    return width;
  }
}
