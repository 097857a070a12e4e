package io.kdra.core.cel;

import java.nio.charset.StandardCharsets;

/**
 * Go 1.26's {@code url.ParseRequestURI} as far as its error decides: null for a valid request
 * URI, else the error's text ({@code parse "<uri>": <reason>}). A port of {@code net/url}'s
 * {@code parse(rawURL, viaRequest=true)}, working on the UTF-8 bytes as Go does (the string is
 * held one byte per char). Hand-written: the Kubernetes format library's {@code uri} returns
 * this text, including netip.ParseAddr's errors for bracketed IPv6 literals.
 */
final class GoRequestUri {

  private GoRequestUri() {}

  static String validate(String uri) {
    String raw = new String(uri.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
    String reason = parse(raw);
    return reason == null ? null : "parse " + GoQuote.bytes(raw) + ": " + reason;
  }

  private static String parse(String raw) {
    for (int i = 0; i < raw.length(); i++) {
      char b = raw.charAt(i);
      if (b < ' ' || b == 0x7f) {
        return "net/url: invalid control character in URL";
      }
    }
    if (raw.isEmpty()) {
      return "empty url";
    }
    if (raw.equals("*")) {
      return null;
    }
    String scheme = "";
    String rest = raw;
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
        continue;
      }
      if ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
        if (i == 0) {
          break;
        }
        continue;
      }
      if (c == ':') {
        if (i == 0) {
          return "missing protocol scheme";
        }
        scheme = raw.substring(0, i).toLowerCase(java.util.Locale.ROOT);
        rest = raw.substring(i + 1);
      }
      break;
    }
    if (rest.endsWith("?") && rest.indexOf('?') == rest.length() - 1) {
      rest = rest.substring(0, rest.length() - 1);
    } else if (rest.indexOf('?') >= 0) {
      rest = rest.substring(0, rest.indexOf('?'));
    }
    if (!rest.startsWith("/")) {
      // a rootless path with a scheme is opaque; without one, no request URI
      return scheme.isEmpty() ? "invalid URI for request" : null;
    }
    if (!scheme.isEmpty() && rest.startsWith("//")) {
      String authority = rest.substring(2);
      rest = "";
      int slash = authority.indexOf('/');
      if (slash >= 0) {
        rest = authority.substring(slash);
        authority = authority.substring(0, slash);
      }
      String error = parseAuthority(scheme, authority);
      if (error != null) {
        return error;
      }
    }
    return unescape(rest, Mode.PATH);
  }

  private static String parseAuthority(String scheme, String authority) {
    int at = authority.lastIndexOf('@');
    String error = parseHost(scheme, at < 0 ? authority : authority.substring(at + 1));
    if (error != null || at < 0) {
      return error;
    }
    String userinfo = authority.substring(0, at);
    for (int i = 0; i < userinfo.length(); i++) {
      char r = userinfo.charAt(i);
      if (!(Character.isLetterOrDigit(r) && r < 0x80) && "-._:~!$&'()*+,;=%@".indexOf(r) < 0) {
        return "net/url: invalid userinfo";
      }
    }
    int colon = userinfo.indexOf(':');
    if (colon < 0) {
      return unescape(userinfo, Mode.USER_PASSWORD);
    }
    error = unescape(userinfo.substring(0, colon), Mode.USER_PASSWORD);
    return error != null ? error : unescape(userinfo.substring(colon + 1), Mode.USER_PASSWORD);
  }

  private static String parseHost(String scheme, String host) {
    int open = host.lastIndexOf('[');
    if (open > 0) {
      return "invalid IP-literal";
    }
    if (open == 0) {
      int close = host.lastIndexOf(']');
      if (close < 0) {
        return "missing ']' in host";
      }
      String colonPort = host.substring(close + 1);
      if (!validOptionalPort(colonPort)) {
        return "invalid port " + GoQuote.bytes(colonPort) + " after host";
      }
      String error = unescape(colonPort, Mode.HOST);
      if (error != null) {
        return error;
      }
      String hostname = host.substring(1, close);
      int zone = hostname.indexOf("%25");
      if (zone >= 0) {
        error = unescape(hostname.substring(0, zone), Mode.HOST);
        if (error == null) {
          error = unescape(hostname.substring(zone), Mode.ZONE);
        }
      } else {
        error = unescape(hostname, Mode.HOST);
      }
      if (error != null) {
        return error;
      }
      return ipLiteral(unescaped(hostname));
    }
    int i = host.indexOf(':');
    if (i >= 0) {
      int last = host.lastIndexOf(':');
      // colons in the host only for schemes other than http(s) (GODEBUG urlstrictcolons)
      if (last != i && !scheme.equals("http") && !scheme.equals("https")) {
        i = last;
      }
      String colonPort = host.substring(i);
      if (!validOptionalPort(colonPort)) {
        return "invalid port " + GoQuote.bytes(colonPort) + " after host";
      }
    }
    return unescape(host, Mode.HOST);
  }

  /** The bracketed host: netip.ParseAddr must parse it, and not as an IPv4 address. */
  private static String ipLiteral(String hostname) {
    for (int i = 0; i < hostname.length(); i++) {
      switch (hostname.charAt(i)) {
        case '.' -> {
          AddrError error = parseIpv4Fields(hostname, 0, hostname.length());
          return error == null ? "invalid IP-literal"
              : invalidHost(hostname, error.msg(), error.at());
        }
        case ':' -> {
          return parseIpv6(hostname);
        }
        case '%' -> {
          return invalidHost(hostname, "missing IPv6 address", null);
        }
        default -> { }
      }
    }
    return invalidHost(hostname, "unable to parse IP", null);
  }

  /** {@code "invalid host: " + parseAddrError.Error()}. */
  private static String invalidHost(String in, String msg, String at) {
    return "invalid host: ParseAddr(" + GoQuote.bytes(in) + "): " + msg
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
          return invalidHost(in, "embedded IPv4 address must replace the final 2 fields of the "
              + "address", s);
        }
        if (i + 4 > 16) {
          return invalidHost(in, "too many hex fields to fit an embedded IPv4 at the end of the "
              + "address", s);
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

  private static boolean validOptionalPort(String port) {
    if (port.isEmpty()) {
      return true;
    }
    if (port.charAt(0) != ':') {
      return false;
    }
    for (int i = 1; i < port.length(); i++) {
      if (port.charAt(i) < '0' || port.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }

  private enum Mode { PATH, HOST, ZONE, USER_PASSWORD }

  private static boolean isHex(char c) {
    return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F';
  }

  private static int unhex(char c) {
    return Character.digit(c, 16);
  }

  /** net/url's {@code unescape}: the error, or null. */
  private static String unescape(String s, Mode mode) {
    for (int i = 0; i < s.length(); ) {
      char c = s.charAt(i);
      if (c == '%') {
        if (i + 2 >= s.length() || !isHex(s.charAt(i + 1)) || !isHex(s.charAt(i + 2))) {
          String escape = s.substring(i, Math.min(s.length(), i + 3));
          return "invalid URL escape " + GoQuote.bytes(escape);
        }
        String escape = s.substring(i, i + 3);
        if (mode == Mode.HOST && unhex(s.charAt(i + 1)) < 8 && !escape.equals("%25")) {
          return "invalid URL escape " + GoQuote.bytes(escape);
        }
        if (mode == Mode.ZONE) {
          int v = unhex(s.charAt(i + 1)) << 4 | unhex(s.charAt(i + 2));
          if (!escape.equals("%25") && v != ' ' && hostNeedsEscape((char) v)) {
            return "invalid URL escape " + GoQuote.bytes(escape);
          }
        }
        i += 3;
      } else {
        if ((mode == Mode.HOST || mode == Mode.ZONE) && c < 0x80 && hostNeedsEscape(c)) {
          return "invalid character " + GoQuote.bytes(String.valueOf(c)) + " in host name";
        }
        i++;
      }
    }
    return null;
  }

  /** {@code shouldEscape(c, encodeHost)}. */
  private static boolean hostNeedsEscape(char c) {
    if ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
      return false;
    }
    return c >= 0x80 || "!$&'()*+,;=:[]<>\"-_.~".indexOf(c) < 0;
  }

  private static String unescaped(String s) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) == '%') {
        sb.append((char) (unhex(s.charAt(i + 1)) << 4 | unhex(s.charAt(i + 2))));
        i += 2;
      } else {
        sb.append(s.charAt(i));
      }
    }
    return sb.toString();
  }
}
