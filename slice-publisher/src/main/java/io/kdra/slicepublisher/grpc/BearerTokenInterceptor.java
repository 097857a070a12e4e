package io.kdra.slicepublisher.grpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.quarkus.grpc.GlobalInterceptor;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Copies the "authorization: Bearer" token of a call into the gRPC context, where the service reads
 * it. Checking it is the service's job, once per stream, off the event loop.
 */
@ApplicationScoped
@GlobalInterceptor
public class BearerTokenInterceptor implements ServerInterceptor {

  /** The bearer token of the current call; null when there is none. */
  public static final Context.Key<String> TOKEN = Context.key("kdra-bearer-token");

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
    return Contexts.interceptCall(Context.current().withValue(TOKEN, token), call, headers, next);
  }
}
