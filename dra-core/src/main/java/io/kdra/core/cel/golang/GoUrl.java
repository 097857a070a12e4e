package io.kdra.core.cel.golang;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Go's {@code net/url}: {@code Parse}, {@code ParseRequestURI} and the parts of {@code URL} that
 * the Kubernetes {@code url} CEL library reads ({@code Scheme}, {@code Host}, {@code Hostname()},
 * {@code Port()}, {@code EscapedPath()}, {@code Query()}). Hand-written port (no Java URI parser
 * accepts and rejects the same strings, nor splits them the same way): it works on the UTF-8 bytes
 * as Go does, each held in one char (ISO-8859-1), and the getters decode them back. The netip
 * checks of bracketed hosts are {@link GoRequestUri}'s.
 */
public final class GoUrl {

  /** The fields of Go's {@code url.URL} that the getters need, as bytes (ISO-8859-1). */
  private String scheme = "";

  private String opaque = "";
  private String host = "";
  private String path = "";
  private String rawPath = "";
  private String rawQuery = "";
  private String fragment = "";
  private String rawFragment = "";
  private boolean forceQuery;
  private boolean omitHost;

  /** Userinfo: null when absent; {@code [username]} or {@code [username, password]}. */
  private String[] user;

  private GoUrl() {}

  /** A parse result: the URL, or Go's error text ({@code parse "<url>": <reason>}). */
  public record Parsed(GoUrl url, String error) {}

  /** {@code url.ParseRequestURI}. */
  public static Parsed parseRequestUri(String text) {
    String raw = bytes(text);
    Object r = parse(raw, true);
    return r instanceof GoUrl u
        ? new Parsed(u, null)
        : new Parsed(null, "parse " + GoQuote.bytes(raw) + ": " + r);
  }

  /** {@code url.Parse}: a fragment cut off first. */
  public static Parsed parse(String text) {
    String raw = bytes(text);
    int hash = raw.indexOf('#');
    String u = hash < 0 ? raw : raw.substring(0, hash);
    Object r = parse(u, false);
    if (!(r instanceof GoUrl url)) {
      return new Parsed(null, "parse " + GoQuote.bytes(u) + ": " + r);
    }
    if (hash >= 0 && hash + 1 < raw.length()) {
      String f = raw.substring(hash + 1);
      Object frag = unescape(f, Mode.FRAGMENT);
      if (!(frag instanceof Unescaped unescaped)) {
        return new Parsed(null, "parse " + GoQuote.bytes(raw) + ": " + frag);
      }
      url.fragment = unescaped.value();
      url.rawFragment = escape(url.fragment, Mode.FRAGMENT).equals(f) ? "" : f;
    }
    return new Parsed(url, null);
  }

  public String scheme() {
    return text(scheme);
  }

  public String host() {
    return text(host);
  }

  public String hostname() {
    return text(splitHostPort(host)[0]);
  }

  public String port() {
    return text(splitHostPort(host)[1]);
  }

  /** {@code String()}: upstream's URL values are equal when these are. */
  @Override
  public String toString() {
    StringBuilder buf = new StringBuilder();
    if (!scheme.isEmpty()) {
      buf.append(scheme).append(':');
    }
    if (!opaque.isEmpty()) {
      buf.append(opaque);
    } else {
      if ((!scheme.isEmpty() || !host.isEmpty() || user != null)
          && !(omitHost && host.isEmpty() && user == null)) {
        if (!host.isEmpty() || !path.isEmpty() || user != null) {
          buf.append("//");
        }
        if (user != null) {
          buf.append(escape(user[0], Mode.USER_PASSWORD));
          if (user.length > 1) {
            buf.append(':').append(escape(user[1], Mode.USER_PASSWORD));
          }
          buf.append('@');
        }
        if (!host.isEmpty()) {
          buf.append(escape(host, Mode.HOST));
        }
      }
      String p = escapedPathBytes();
      if (!p.isEmpty() && p.charAt(0) != '/' && !host.isEmpty()) {
        buf.append('/');
      }
      if (buf.length() == 0) {
        int slash = p.indexOf('/');
        if ((slash < 0 ? p : p.substring(0, slash)).contains(":")) {
          buf.append("./");
        }
      }
      buf.append(p);
    }
    if (forceQuery || !rawQuery.isEmpty()) {
      buf.append('?').append(rawQuery);
    }
    if (!fragment.isEmpty()) {
      buf.append('#').append(escapedFragment());
    }
    return text(buf.toString());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof GoUrl u && toString().equals(u.toString());
  }

  @Override
  public int hashCode() {
    return toString().hashCode();
  }

  private String escapedFragment() {
    if (!rawFragment.isEmpty() && validEncoded(rawFragment, Mode.FRAGMENT)) {
      Object f = unescape(rawFragment, Mode.FRAGMENT);
      if (f instanceof Unescaped ok && ok.value().equals(fragment)) {
        return rawFragment;
      }
    }
    return escape(fragment, Mode.FRAGMENT);
  }

  /** {@code EscapedPath()}. */
  public String escapedPath() {
    return text(escapedPathBytes());
  }

  private String escapedPathBytes() {
    if (!rawPath.isEmpty() && validEncoded(rawPath, Mode.PATH)) {
      Object p = unescape(rawPath, Mode.PATH);
      if (p instanceof Unescaped ok && ok.value().equals(path)) {
        return rawPath;
      }
    }
    if (path.equals("*")) {
      return "*";
    }
    return escape(path, Mode.PATH);
  }

  /** {@code Query()}: {@code ParseQuery} of the raw query, malformed pairs skipped. */
  public Map<String, List<String>> query() {
    Map<String, List<String>> result = new LinkedHashMap<>();
    String query = rawQuery;
    int count = 1;
    for (int i = 0; i < query.length(); i++) {
      if (query.charAt(i) == '&') {
        count++;
      }
    }
    if (count > 10_000) {
      return result; // "number of URL query parameters exceeded limit"
    }
    while (!query.isEmpty()) {
      int amp = query.indexOf('&');
      String key = amp < 0 ? query : query.substring(0, amp);
      query = amp < 0 ? "" : query.substring(amp + 1);
      if (key.contains(";") || key.isEmpty()) {
        continue;
      }
      int eq = key.indexOf('=');
      String value = eq < 0 ? "" : key.substring(eq + 1);
      key = eq < 0 ? key : key.substring(0, eq);
      Object k = unescape(key, Mode.QUERY_COMPONENT);
      Object v = unescape(value, Mode.QUERY_COMPONENT);
      if (k instanceof Unescaped uk && v instanceof Unescaped uv) {
        result.computeIfAbsent(text(uk.value()), x -> new ArrayList<>()).add(text(uv.value()));
      }
    }
    return result;
  }

  // ---- parsing: net/url's parse(rawURL, viaRequest), returning a GoUrl or the error text

  private static Object parse(String raw, boolean viaRequest) {
    for (int i = 0; i < raw.length(); i++) {
      char b = raw.charAt(i);
      if (b < ' ' || b == 0x7f) {
        return "net/url: invalid control character in URL";
      }
    }
    if (raw.isEmpty() && viaRequest) {
      return "empty url";
    }
    GoUrl url = new GoUrl();
    if (raw.equals("*")) {
      url.path = "*";
      return url;
    }
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
        url.scheme = raw.substring(0, i).toLowerCase(Locale.ROOT);
        rest = raw.substring(i + 1);
      }
      break;
    }
    int question = rest.indexOf('?');
    if (rest.endsWith("?") && question == rest.length() - 1) {
      url.forceQuery = true;
      rest = rest.substring(0, rest.length() - 1);
    } else if (question >= 0) {
      url.rawQuery = rest.substring(question + 1);
      rest = rest.substring(0, question);
    }
    if (!rest.startsWith("/")) {
      if (!url.scheme.isEmpty()) {
        url.opaque = rest;
        return url;
      }
      if (viaRequest) {
        return "invalid URI for request";
      }
      int slash = rest.indexOf('/');
      if ((slash < 0 ? rest : rest.substring(0, slash)).contains(":")) {
        return "first path segment in URL cannot contain colon";
      }
    }
    if ((!url.scheme.isEmpty() || !viaRequest && !rest.startsWith("///"))
        && rest.startsWith("//")) {
      String authority = rest.substring(2);
      rest = "";
      int slash = authority.indexOf('/');
      if (slash >= 0) {
        rest = authority.substring(slash);
        authority = authority.substring(0, slash);
      }
      Object host = parseAuthority(url, authority);
      if (!(host instanceof Unescaped h)) {
        return host;
      }
      url.host = h.value();
    } else if (!url.scheme.isEmpty() && rest.startsWith("/")) {
      url.omitHost = true;
    }
    Object p = unescape(rest, Mode.PATH);
    if (!(p instanceof Unescaped unescapedPath)) {
      return p;
    }
    url.path = unescapedPath.value();
    url.rawPath = escape(url.path, Mode.PATH).equals(rest) ? "" : rest;
    return url;
  }

  /** The host (the user set on url), or the error text. */
  private static Object parseAuthority(GoUrl url, String authority) {
    int at = authority.lastIndexOf('@');
    Object host = parseHost(url.scheme, at < 0 ? authority : authority.substring(at + 1));
    if (!(host instanceof Unescaped) || at < 0) {
      return host;
    }
    String userinfo = authority.substring(0, at);
    for (int i = 0; i < userinfo.length(); i++) {
      char r = userinfo.charAt(i);
      boolean alnum = 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9';
      if (!alnum && "-._:~!$&'()*+,;=%@".indexOf(r) < 0) {
        return "net/url: invalid userinfo";
      }
    }
    int colon = userinfo.indexOf(':');
    Object name = unescape(colon < 0 ? userinfo : userinfo.substring(0, colon), Mode.USER_PASSWORD);
    if (!(name instanceof Unescaped n)) {
      return name;
    }
    if (colon < 0) {
      url.user = new String[] {n.value()};
      return host;
    }
    Object password = unescape(userinfo.substring(colon + 1), Mode.USER_PASSWORD);
    if (!(password instanceof Unescaped pw)) {
      return password;
    }
    url.user = new String[] {n.value(), pw.value()};
    return host;
  }

  /** The unescaped host[:port], or the error text. */
  private static Object parseHost(String scheme, String host) {
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
      Object port = unescape(colonPort, Mode.HOST);
      if (!(port instanceof Unescaped unescapedPort)) {
        return port;
      }
      String hostname = host.substring(1, close);
      int zone = hostname.indexOf("%25");
      String unescapedHostname;
      if (zone >= 0) {
        Object hostPart = unescape(hostname.substring(0, zone), Mode.HOST);
        if (!(hostPart instanceof Unescaped h)) {
          return hostPart;
        }
        Object zonePart = unescape(hostname.substring(zone), Mode.ZONE);
        if (!(zonePart instanceof Unescaped z)) {
          return zonePart;
        }
        unescapedHostname = h.value() + z.value();
      } else {
        Object h = unescape(hostname, Mode.HOST);
        if (!(h instanceof Unescaped uh)) {
          return h;
        }
        unescapedHostname = uh.value();
      }
      String error = GoRequestUri.ipLiteral(unescapedHostname);
      if (error != null) {
        return error;
      }
      return new Unescaped("[" + unescapedHostname + "]" + unescapedPort.value());
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

  private static String[] splitHostPort(String hostPort) {
    String host = hostPort;
    String port = "";
    int colon = host.lastIndexOf(':');
    if (colon >= 0 && validOptionalPort(host.substring(colon))) {
      port = host.substring(colon + 1);
      host = host.substring(0, colon);
    }
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return new String[] {host, port};
  }

  // ---- escaping: net/url's encoding modes

  enum Mode {
    PATH,
    PATH_SEGMENT,
    HOST,
    ZONE,
    USER_PASSWORD,
    QUERY_COMPONENT,
    FRAGMENT
  }

  /** A successfully unescaped string (the other results are error texts). */
  private record Unescaped(String value) {}

  /** net/url's {@code unescape}: the unescaped bytes, or the error text. */
  private static Object unescape(String s, Mode mode) {
    int n = 0;
    boolean hasPlus = false;
    for (int i = 0; i < s.length(); ) {
      char c = s.charAt(i);
      if (c == '%') {
        n++;
        if (i + 2 >= s.length() || !isHex(s.charAt(i + 1)) || !isHex(s.charAt(i + 2))) {
          String escape = s.substring(i, Math.min(s.length(), i + 3));
          return "invalid URL escape " + GoQuote.bytes(escape);
        }
        String escape = s.substring(i, i + 3);
        if (mode == Mode.HOST && unhex(s.charAt(i + 1)) < 8 && !escape.equals("%25")) {
          return "invalid URL escape " + GoQuote.bytes(escape);
        }
        if (mode == Mode.ZONE) {
          char v = (char) (unhex(s.charAt(i + 1)) << 4 | unhex(s.charAt(i + 2)));
          if (!escape.equals("%25") && v != ' ' && shouldEscape(v, Mode.HOST)) {
            return "invalid URL escape " + GoQuote.bytes(escape);
          }
        }
        i += 3;
      } else if (c == '+') {
        hasPlus = mode == Mode.QUERY_COMPONENT;
        i++;
      } else {
        if ((mode == Mode.HOST || mode == Mode.ZONE) && c < 0x80 && shouldEscape(c, mode)) {
          return "invalid character " + GoQuote.bytes(String.valueOf(c)) + " in host name";
        }
        i++;
      }
    }
    if (n == 0 && !hasPlus) {
      return new Unescaped(s);
    }
    StringBuilder t = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%') {
        t.append((char) (unhex(s.charAt(i + 1)) << 4 | unhex(s.charAt(i + 2))));
        i += 2;
      } else if (c == '+') {
        t.append(mode == Mode.QUERY_COMPONENT ? ' ' : '+');
      } else {
        t.append(c);
      }
    }
    return new Unescaped(t.toString());
  }

  private static String escape(String s, Mode mode) {
    StringBuilder t = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == ' ' && mode == Mode.QUERY_COMPONENT) {
        t.append('+');
      } else if (shouldEscape(c, mode)) {
        t.append('%')
            .append("0123456789ABCDEF".charAt(c >> 4))
            .append("0123456789ABCDEF".charAt(c & 15));
      } else {
        t.append(c);
      }
    }
    return t.toString();
  }

  /** {@code validEncoded(s, mode)}. */
  private static boolean validEncoded(String s, Mode mode) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if ("!$&'()*+,;=:@[]%".indexOf(c) < 0 && shouldEscape(c, mode)) {
        return false;
      }
    }
    return true;
  }

  /** net/url's {@code shouldEscape} (gen_encoding_table.go), for one byte. */
  static boolean shouldEscape(char c, Mode mode) {
    if ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
      return false;
    }
    if (mode == Mode.HOST || mode == Mode.ZONE) {
      if ("!$&'()*+,;=:[]<>\"".indexOf(c) >= 0) {
        return false;
      }
    }
    switch (c) {
      case '-', '_', '.', '~' -> {
        return false;
      }
      case '$', '&', '+', ',', '/', ':', ';', '=', '?', '@' -> {
        return switch (mode) {
          case PATH -> c == '?';
          case PATH_SEGMENT -> c == '/' || c == ';' || c == ',' || c == '?';
          case USER_PASSWORD -> c == '@' || c == '/' || c == '?' || c == ':';
          case QUERY_COMPONENT -> true;
          case FRAGMENT -> false;
          default -> true;
        };
      }
      default -> {}
    }
    if (mode == Mode.FRAGMENT && (c == '!' || c == '(' || c == ')' || c == '*')) {
      return false;
    }
    return true;
  }

  private static boolean isHex(char c) {
    return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F';
  }

  private static int unhex(char c) {
    return Character.digit(c, 16);
  }

  /** A Java string as Go's bytes, one char per byte. */
  private static String bytes(String s) {
    return new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
  }

  /** Go's bytes back as a Java string (invalid UTF-8 as U+FFFD, as Go's range loops read it). */
  private static String text(String latin1) {
    return new String(latin1.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
  }
}
