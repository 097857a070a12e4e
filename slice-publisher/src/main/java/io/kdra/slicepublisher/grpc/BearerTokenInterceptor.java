package io.kdra.slicepublisher.grpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.quarkus.grpc.GlobalInterceptor;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Copies the "authorization: Bearer" token of a call and the caller's address into the gRPC
 * context, where the service reads them. Checking the token is the service's job ({@link
 * DriverAuthenticator}), once per stream, off the event loop; the address bounds how many reviews
 * one caller may cause.
 */
@ApplicationScoped
@GlobalInterceptor
public class BearerTokenInterceptor implements ServerInterceptor {

  /** The bearer token of the current call; null when there is none. */
  public static final Context.Key<String> TOKEN = Context.key("kdra-bearer-token");

  /** The caller's IP address (without port: one host's connections share it); never null. */
  public static final Context.Key<String> PEER = Context.key("kdra-peer");

  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final String BEARER = "bearer ";

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    String value = headers.get(AUTHORIZATION);
    String token =
        value != null && value.regionMatches(true, 0, BEARER, 0, BEARER.length())
            ? value.substring(BEARER.length()).trim()
            : null;
    return Contexts.interceptCall(
        Context.current()
            .withValue(TOKEN, token)
            .withValue(PEER, host(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR))),
        call,
        headers,
        next);
  }

  static String host(SocketAddress address) {
    if (address instanceof InetSocketAddress inet) {
      return inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
    }
    return String.valueOf(address);
  }
}
