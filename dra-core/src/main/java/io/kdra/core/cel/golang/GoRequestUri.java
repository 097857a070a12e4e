package io.kdra.core.cel.golang;

/**
 * Go's {@code url.ParseRequestURI} as far as its error decides: null for a valid request URI, else
 * the error's text ({@code parse "<uri>": <reason>}), from {@link GoUrl}'s port of {@code net/url};
 * and the part of {@code netip.ParseAddr} that net/url applies to bracketed hosts, with its error
 * texts. Hand-written: the Kubernetes format library's {@code uri} returns this text.
 */
public final class GoRequestUri {

  private GoRequestUri() {}

  public static String validate(String uri) {
    return GoUrl.parseRequestUri(uri).error();
  }

  /** The bracketed host: netip.ParseAddr must parse it, and not as an IPv4 address. */
  static String ipLiteral(String hostname) {
    for (int i = 0; i < hostname.length(); i++) {
      switch (hostname.charAt(i)) {
        case '.' -> {
          AddrError error = parseIpv4Fields(hostname, 0, hostname.length());
          return error == null
              ? "invalid IP-literal"
              : invalidHost(hostname, error.msg(), error.at());
        }
        case ':' -> {
          return parseIpv6(hostname);
        }
        case '%' -> {
          return invalidHost(hostname, "missing IPv6 address", null);
        }
        default -> {}
      }
    }
    return invalidHost(hostname, "unable to parse IP", null);
  }

  /** {@code "invalid host: " + parseAddrError.Error()}. */
  private static String invalidHost(String in, String msg, String at) {
    return "invalid host: ParseAddr("
        + GoQuote.bytes(in)
        + "): "
        + msg
        + (at == null || at.isEmpty() ? "" : " (at " + GoQuote.bytes(at) + ")");
  }

  /** netip's {@code parseAddrError} without its input: what is wrong, and where. */
  private record AddrError(String msg, String at) {}

  /** netip's {@code parseIPv4Fields}: the error, or null. */
  private static AddrError parseIpv4Fields(String in, int off, int end) {
    String s = in.substring(off, end);
    int val = 0;
    int pos = 0;
    int digits = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c >= '0' && c <= '9') {
        if (digits == 1 && val == 0) {
          return new AddrError("IPv4 field has octet with leading zero", null);
        }
        val = val * 10 + c - '0';
        digits++;
        if (val > 255) {
          return new AddrError("IPv4 field has value >255", null);
        }
      } else if (c == '.') {
        if (i == 0 || i == s.length() - 1 || s.charAt(i - 1) == '.') {
          return new AddrError("IPv4 field must have at least one digit", s.substring(i));
        }
        if (pos == 3) {
          return new AddrError("IPv4 address too long", null);
        }
        pos++;
        val = 0;
        digits = 0;
      } else {
        return new AddrError("unexpected character", s.substring(i));
      }
    }
    return pos < 3 ? new AddrError("IPv4 address too short", null) : null;
  }

  /** netip's {@code parseIPv6}, as far as its errors go: the error, or null. */
  private static String parseIpv6(String in) {
    String s = in;
    String zone = "";
    int percent = s.indexOf('%');
    if (percent >= 0) {
      zone = s.substring(percent + 1);
      s = s.substring(0, percent);
      if (zone.isEmpty()) {
        return invalidHost(in, "zone must be a non-empty string", null);
      }
    }
    int ellipsis = -1;
    if (s.length() >= 2 && s.charAt(0) == ':' && s.charAt(1) == ':') {
      ellipsis = 0;
      s = s.substring(2);
      if (s.isEmpty()) {
        return null;
      }
    }
    int i = 0;
    while (i < 16) {
      int off = 0;
      int acc = 0;
      for (; off < s.length(); off++) {
        int digit = Character.digit(s.charAt(off), 16);
        if (digit < 0 || s.charAt(off) >= 0x80) {
          break;
        }
        acc = (acc << 4) + digit;
        if (off > 3) {
          return invalidHost(in, "each group must have 4 or less digits", s);
        }
        if (acc > 0xffff) {
          return invalidHost(in, "IPv6 field has value >=2^16", s);
        }
      }
      if (off == 0) {
        return invalidHost(in, "each colon-separated field must have at least one digit", s);
      }
      if (off < s.length() && s.charAt(off) == '.') {
        if (ellipsis < 0 && i != 12) {
          return invalidHost(
              in, "embedded IPv4 address must replace the final 2 fields of the " + "address", s);
        }
        if (i + 4 > 16) {
          return invalidHost(
              in, "too many hex fields to fit an embedded IPv4 at the end of the " + "address", s);
        }
        int end = in.length() - (zone.isEmpty() ? 0 : zone.length() + 1);
        AddrError error = parseIpv4Fields(in, end - s.length(), end);
        if (error != null) {
          return invalidHost(in, error.msg(), error.at());
        }
        s = "";
        i += 4;
        break;
      }
      i += 2;
      s = s.substring(off);
      if (s.isEmpty()) {
        break;
      }
      if (s.charAt(0) != ':') {
        return invalidHost(in, "unexpected character, want colon", s);
      } else if (s.length() == 1) {
        return invalidHost(in, "colon must be followed by more characters", s);
      }
      s = s.substring(1);
      if (s.charAt(0) == ':') {
        if (ellipsis >= 0) {
          return invalidHost(in, "multiple :: in address", s);
        }
        ellipsis = i;
        s = s.substring(1);
        if (s.isEmpty()) {
          break;
        }
      }
    }
    if (!s.isEmpty()) {
      return invalidHost(in, "trailing garbage after address", s);
    }
    if (i < 16 && ellipsis < 0) {
      return invalidHost(in, "address string too short", null);
    }
    if (i >= 16 && ellipsis >= 0) {
      return invalidHost(in, "the :: must expand to at least one field of zeros", null);
    }
    return null;
  }
}
