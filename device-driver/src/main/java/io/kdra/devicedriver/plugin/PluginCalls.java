package io.kdra.devicedriver.plugin;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * What every DRA gRPC method shares, whatever its API version: optional serialisation, the
 * guarantee of one response entry per claim, and turning an unexpected exception into a gRPC error
 * (rather than a hung call).
 */
final class PluginCalls {
  private static final Logger LOG = Logger.getLogger(PluginCalls.class);

  private final DraPlugin plugin;
  // Fair, so that a burst of calls cannot starve an earlier one when serialising.
  private final ReentrantLock serial = new ReentrantLock(true);
  private final boolean serialize;

  PluginCalls(DraPlugin plugin, boolean serialize) {
    this.plugin = plugin;
    this.serialize = serialize;
  }

  Map<String, PrepareResult> prepare(List<ClaimRef> claims) {
    Map<String, PrepareResult> results = locked(() -> plugin.prepareResourceClaims(claims));
    // The kubelet retries claims without an entry; fill any gap with a named error instead, so
    // a plugin bug shows up as a message and not as a silent retry loop.
    Map<String, PrepareResult> complete = new LinkedHashMap<>(results);
    for (ClaimRef c : claims) {
      complete.putIfAbsent(c.uid(), PrepareResult.failed("driver returned no result for " + c));
    }
    return complete;
  }

  Map<String, String> unprepare(List<ClaimRef> claims) {
    if (claims.isEmpty()) {
      // the liveness probe's call (PluginSocketProbe): it must not queue behind a serialised call
      return Map.of();
    }
    Map<String, String> results = locked(() -> plugin.unprepareResourceClaims(claims));
    Map<String, String> complete = new LinkedHashMap<>(results);
    for (ClaimRef c : claims) {
      complete.putIfAbsent(c.uid(), "driver returned no result for " + c);
    }
    return complete;
  }

  /** Runs one unary call and completes the observer exactly once. */
  <T> void unary(String method, StreamObserver<T> out, Supplier<T> call) {
    T response;
    try {
      response = call.get();
    } catch (RuntimeException | Error e) {
      LOG.errorf(e, "%s failed", method);
      plugin.handleError(method + " failed", e);
      out.onError(Status.INTERNAL.withDescription(method + ": " + e).withCause(e).asException());
      return;
    }
    out.onNext(response);
    out.onCompleted();
  }

  private <T> T locked(Supplier<T> call) {
    if (!serialize) {
      return call.get();
    }
    serial.lock();
    try {
      return call.get();
    } finally {
      serial.unlock();
    }
  }
}
