package io.kdra.core.cel;

/**
 * Go's {@code strconv.Quote} of a byte string (held one byte per char, as ISO-8859-1): valid UTF-8
 * runes as {@link StringFormatLibrary#goQuote} writes them, other bytes as {@code \xNN}.
 */
final class GoQuote {

  private GoQuote() {}

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
      StringFormatLibrary.appendQuoted(sb, rune);
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
