package io.kdra.core.cel.k8slib;

import com.google.common.net.InetAddresses;
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
import java.math.BigInteger;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * The Kubernetes {@code ip} and {@code cidr} libraries ({@code k8s.io/apiserver/pkg/cel/library/
 * ip.go}, {@code cidr.go}), with Go's {@code net/netip} parsing rules: dotted IPv4 without leading
 * zeros, IPv6 in any RFC 4291 form printed as RFC 5952; zones and IPv4-mapped IPv6 addresses
 * rejected. Hand-written on Guava's {@code InetAddresses}: cel-java has no such library.
 */
public final class KubernetesNetLibrary implements CelCompilerLibrary, CelRuntimeLibrary {

  static final CelType IP = OpaqueType.create("net.IP");
  static final CelType CIDR = OpaqueType.create("net.CIDR");

  /** An address: 4 or 16 bytes. */
  public record Ip(byte[] bytes) {
    boolean is4() {
      return bytes.length == 4;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Ip other && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
      try {
        return InetAddresses.toAddrString(InetAddress.getByAddress(bytes));
      } catch (UnknownHostException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** A prefix as written (address not masked) and its length. */
  public record Cidr(Ip ip, int bits) {
    @Override
    public String toString() {
      return ip + "/" + bits;
    }

    Ip masked() {
      byte[] b = ip.bytes().clone();
      for (int i = 0; i < b.length; i++) {
        int keep = Math.max(0, Math.min(8, bits - i * 8));
        b[i] &= (byte) (0xff << (8 - keep));
      }
      return new Ip(b);
    }

    boolean contains(Ip other) {
      return other.bytes().length == ip.bytes().length
          && new Cidr(other, bits).masked().equals(masked());
    }
  }

  private static final Pattern IPV4 =
      Pattern.compile(
          "(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})");

  @Override
  public void setCheckerOptions(CelCheckerBuilder checker) {
    checker.addFunctionDeclarations(
        CelFunctionDecl.newFunctionDeclaration(
            "ip",
            CelOverloadDecl.newGlobalOverload("string_to_ip", IP, SimpleType.STRING),
            CelOverloadDecl.newMemberOverload("cidr_ip", IP, CIDR)),
        global("isIP", "is_ip", SimpleType.BOOL, SimpleType.STRING),
        global("ip.isCanonical", "ip_is_canonical", SimpleType.BOOL, SimpleType.STRING),
        member("family", "ip_family", SimpleType.INT, IP),
        member("isUnspecified", "ip_is_unspecified", SimpleType.BOOL, IP),
        member("isLoopback", "ip_is_loopback", SimpleType.BOOL, IP),
        member("isLinkLocalMulticast", "ip_is_link_local_multicast", SimpleType.BOOL, IP),
        member("isLinkLocalUnicast", "ip_is_link_local_unicast", SimpleType.BOOL, IP),
        member("isGlobalUnicast", "ip_is_global_unicast", SimpleType.BOOL, IP),
        CelFunctionDecl.newFunctionDeclaration(
            "string",
            CelOverloadDecl.newGlobalOverload("ip_to_string", SimpleType.STRING, IP),
            CelOverloadDecl.newGlobalOverload("cidr_to_string", SimpleType.STRING, CIDR)),
        global("cidr", "string_to_cidr", CIDR, SimpleType.STRING),
        global("isCIDR", "is_cidr", SimpleType.BOOL, SimpleType.STRING),
        CelFunctionDecl.newFunctionDeclaration(
            "containsIP",
            CelOverloadDecl.newMemberOverload(
                "cidr_contains_ip_string", SimpleType.BOOL, CIDR, SimpleType.STRING),
            CelOverloadDecl.newMemberOverload("cidr_contains_ip_ip", SimpleType.BOOL, CIDR, IP)),
        CelFunctionDecl.newFunctionDeclaration(
            "containsCIDR",
            CelOverloadDecl.newMemberOverload(
                "cidr_contains_cidr_string", SimpleType.BOOL, CIDR, SimpleType.STRING),
            CelOverloadDecl.newMemberOverload("cidr_contains_cidr", SimpleType.BOOL, CIDR, CIDR)),
        member("prefixLength", "cidr_prefix_length", SimpleType.INT, CIDR),
        member("masked", "cidr_masked", CIDR, CIDR));
  }

  private static CelFunctionDecl global(String name, String id, CelType result, CelType arg) {
    return CelFunctionDecl.newFunctionDeclaration(
        name, CelOverloadDecl.newGlobalOverload(id, result, arg));
  }

  private static CelFunctionDecl member(String name, String id, CelType result, CelType self) {
    return CelFunctionDecl.newFunctionDeclaration(
        name, CelOverloadDecl.newMemberOverload(id, result, self));
  }

  @Override
  public void setRuntimeOptions(CelRuntimeBuilder runtime) {
    runtime.addFunctionBindings(
        CelFunctionBinding.from("string_to_ip", String.class, KubernetesNetLibrary::ip),
        CelFunctionBinding.from("cidr_ip", Cidr.class, Cidr::ip),
        CelFunctionBinding.from("is_ip", String.class, s -> parseIp(s) != null),
        CelFunctionBinding.from("ip_is_canonical", String.class, s -> ip(s).toString().equals(s)),
        CelFunctionBinding.from("ip_family", Ip.class, ip -> ip.is4() ? 4L : 6L),
        CelFunctionBinding.from("ip_is_unspecified", Ip.class, KubernetesNetLibrary::isUnspecified),
        CelFunctionBinding.from("ip_is_loopback", Ip.class, KubernetesNetLibrary::isLoopback),
        CelFunctionBinding.from(
            "ip_is_link_local_multicast",
            Ip.class,
            ip ->
                ip.is4()
                    ? u(ip, 0) == 224 && u(ip, 1) == 0 && u(ip, 2) == 0
                    : u(ip, 0) == 0xff && (u(ip, 1) & 0x0f) == 0x02),
        CelFunctionBinding.from(
            "ip_is_link_local_unicast", Ip.class, KubernetesNetLibrary::isLinkLocalUnicast),
        CelFunctionBinding.from(
            "ip_is_global_unicast", Ip.class, KubernetesNetLibrary::isGlobalUnicast),
        CelFunctionBinding.from("ip_to_string", Ip.class, Ip::toString),
        CelFunctionBinding.from("cidr_to_string", Cidr.class, Cidr::toString),
        CelFunctionBinding.from("string_to_cidr", String.class, KubernetesNetLibrary::cidr),
        CelFunctionBinding.from("is_cidr", String.class, s -> parseCidr(s) != null),
        CelFunctionBinding.from(
            "cidr_contains_ip_string", Cidr.class, String.class, (c, s) -> c.contains(ip(s))),
        CelFunctionBinding.from("cidr_contains_ip_ip", Cidr.class, Ip.class, Cidr::contains),
        CelFunctionBinding.from(
            "cidr_contains_cidr_string",
            Cidr.class,
            String.class,
            (c, s) -> containsCidr(c, cidr(s))),
        CelFunctionBinding.from(
            "cidr_contains_cidr", Cidr.class, Cidr.class, KubernetesNetLibrary::containsCidr),
        CelFunctionBinding.from("cidr_prefix_length", Cidr.class, c -> (long) c.bits()),
        CelFunctionBinding.from("cidr_masked", Cidr.class, c -> new Cidr(c.masked(), c.bits())));
  }

  private static int u(Ip ip, int i) {
    return ip.bytes()[i] & 0xff;
  }

  private static boolean isUnspecified(Ip ip) {
    return new BigInteger(1, ip.bytes()).signum() == 0;
  }

  private static boolean isLoopback(Ip ip) {
    return ip.is4() ? u(ip, 0) == 127 : new BigInteger(1, ip.bytes()).equals(BigInteger.ONE);
  }

  private static boolean isLinkLocalUnicast(Ip ip) {
    return ip.is4()
        ? u(ip, 0) == 169 && u(ip, 1) == 254
        : u(ip, 0) == 0xfe && (u(ip, 1) & 0xc0) == 0x80;
  }

  private static boolean isGlobalUnicast(Ip ip) {
    if (isUnspecified(ip) || isLoopback(ip) || isLinkLocalUnicast(ip)) {
      return false;
    }
    if (ip.is4()) {
      boolean broadcast = u(ip, 0) == 255 && u(ip, 1) == 255 && u(ip, 2) == 255 && u(ip, 3) == 255;
      return !broadcast && (u(ip, 0) & 0xf0) != 0xe0;
    }
    return u(ip, 0) != 0xff;
  }

  private static boolean containsCidr(Cidr outer, Cidr inner) {
    return outer.ip().bytes().length == inner.ip().bytes().length
        && outer.bits() <= inner.bits()
        && outer.contains(inner.ip());
  }

  static Ip ip(String s) throws CelEvaluationException {
    String problem = ipProblem(s);
    if (problem != null) {
      throw new CelEvaluationException(problem);
    }
    return parseIp(s);
  }

  private static String ipProblem(String s) {
    if (s.contains("%")) {
      return "IP address \"" + s + "\" with zone value is not allowed";
    }
    Ip ip = parseIp(s);
    if (ip == null) {
      return s.contains(":") && mapped(s)
          ? "IPv4-mapped IPv6 address \"" + s + "\" is not allowed"
          : "IP Address \""
              + s
              + "\" parse error during conversion from string: ParseAddr(\""
              + s
              + "\"): unable to parse IP";
    }
    return null;
  }

  private static boolean mapped(String s) {
    try {
      return InetAddresses.forString(s) instanceof Inet4Address && validDotted(s);
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static boolean validDotted(String s) {
    int colon = s.lastIndexOf(':');
    String tail = s.substring(colon + 1);
    return !tail.contains(".") || IPV4.matcher(tail).matches() && octetsOk(tail);
  }

  private static boolean octetsOk(String dotted) {
    for (String part : dotted.split("\\.")) {
      if (Integer.parseInt(part) > 255) {
        return false;
      }
    }
    return true;
  }

  /** An address as netip.ParseAddr accepts it (no zone, not IPv4-mapped), or null. */
  static Ip parseIp(String s) {
    if (s.contains("%") || s.isEmpty()) {
      return null;
    }
    if (!s.contains(":")) {
      if (!IPV4.matcher(s).matches() || !octetsOk(s)) {
        return null;
      }
    } else if (!validDotted(s)) {
      return null;
    }
    InetAddress address;
    try {
      address = InetAddresses.forString(s);
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (s.contains(":") && address instanceof Inet4Address) {
      return null; // IPv4-mapped IPv6
    }
    return new Ip(address.getAddress());
  }

  static Cidr cidr(String s) throws CelEvaluationException {
    Cidr c = parseCidr(s);
    if (c == null) {
      int slash = s.lastIndexOf('/');
      String addr = slash < 0 ? s : s.substring(0, slash);
      String reason =
          slash >= 0 && addr.contains(":") && mapped(addr)
              ? "IPv4-mapped IPv6 address \"" + s + "\" is not allowed"
              : "network address parse error during conversion from string: netip.ParsePrefix(\""
                  + s
                  + "\"): invalid prefix";
      throw new CelEvaluationException(
          "network address parse error during conversion from string: " + reason);
    }
    return c;
  }

  static Cidr parseCidr(String s) {
    int slash = s.lastIndexOf('/');
    if (slash < 0) {
      return null;
    }
    Ip ip = parseIp(s.substring(0, slash));
    String bits = s.substring(slash + 1);
    if (ip == null || !bits.matches("0|[1-9][0-9]{0,2}")) {
      return null;
    }
    int n = Integer.parseInt(bits);
    return n > ip.bytes().length * 8 ? null : new Cidr(ip, n);
  }
}
