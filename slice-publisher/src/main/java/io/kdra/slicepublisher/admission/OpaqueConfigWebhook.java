package io.kdra.slicepublisher.admission;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kdra.slicepublisher.config.PublisherConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.TimeoutHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import org.jboss.logging.Logger;

/**
 * The validating admission webhook for our drivers' opaque configs: {@code POST} {@value #PATH}
 * with an {@code admission.k8s.io/v1} AdmissionReview, answered by {@link OpaqueConfigAdmission}
 * for the driver names the publisher serves ({@code kdra.slice-publisher.drivers}). Served over
 * HTTPS only (the chart's webhook port: the API server calls webhooks over TLS only); on the plain
 * port, which probes and metrics use, the path is not found. A Vert.x route, not a REST resource:
 * one POST needs no REST extension. Every replica answers, leader or not: a review reads nothing
 * but the request.
 *
 * <p>Bounded, so that a flood from any pod cannot starve the health checks that share the event
 * loop: at most {@value #MAX_IN_FLIGHT} requests at a time (more get 429 before their body is
 * read), each for at most {@link #DEADLINE}, bodies of at most {@link #MAX_BODY} bytes (413
 * unread), parsed and decided off the event loop on {@value #WORKERS} threads of their own.
 */
@ApplicationScoped
public class OpaqueConfigWebhook {

  /** The webhook's path, as the chart's ValidatingWebhookConfiguration names it. */
  public static final String PATH = "/admission/opaque-config";

  /**
   * 2 MiB. Only CREATEs of claims and templates (one object; their specs are immutable) and spec
   * changes of DeviceClasses (two objects, each spec bounded by upstream to 32 selectors and 32
   * configs of at most 10 KiB) reach this webhook; etcd keeps objects of at most 1.5 MiB. So every
   * review the API server can send fits, while a caller that is not the API server cannot make the
   * publisher hold more than {@value #MAX_IN_FLIGHT} times this. (controller-runtime's generic 7
   * MiB allows two objects of the API server's 3 MiB request limit.)
   */
  static final long MAX_BODY = 2L * 1024 * 1024;

  /** Requests held at once, from their headers to their answer; a review takes microseconds. */
  static final int MAX_IN_FLIGHT = 8;

  /**
   * A request not answered by then (its body still coming) is ended with 408, so that slow callers
   * cannot hold the {@link #MAX_IN_FLIGHT} places: the API server sends a review at once and waits
   * at most 30 s (timeoutSeconds), the chart's 5 s.
   */
  static final Duration DEADLINE = Duration.ofSeconds(10);

  /** Threads that parse and decide: parsing, not the body, is what costs memory. */
  static final int WORKERS = 2;

  private static final Logger LOG = Logger.getLogger(OpaqueConfigWebhook.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final OpaqueConfigAdmission admission;
  private final MeterRegistry registry;
  private final Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT);

  @Inject
  public OpaqueConfigWebhook(PublisherConfig config, MeterRegistry registry) {
    this.admission = new OpaqueConfigAdmission(new OpaqueConfigReview(config.drivers()));
    this.registry = registry;
  }

  void routes(@Observes Router router, Vertx vertx) {
    WorkerExecutor workers = vertx.createSharedWorkerExecutor("admission-review", WORKERS);
    // two routes, in this order: Vert.x wants a body handler first on its route
    router.post(PATH).handler(TimeoutHandler.create(DEADLINE.toMillis(), 408)).handler(this::admit);
    router
        .post(PATH)
        .handler(BodyHandler.create(false).setBodyLimit(MAX_BODY))
        .handler(ctx -> review(ctx, workers));
  }

  /** TLS only, and only while fewer than {@link #MAX_IN_FLIGHT} are held; before the body. */
  private void admit(RoutingContext ctx) {
    if (!ctx.request().isSSL()) {
      ctx.response().setStatusCode(404).end();
      return;
    }
    if (!inFlight.tryAcquire()) {
      ctx.response()
          .setStatusCode(429)
          .putHeader(HttpHeaders.RETRY_AFTER, "1")
          .end("too many admission reviews at once");
      return;
    }
    ctx.addEndHandler(done -> inFlight.release());
    ctx.next();
  }

  private void review(RoutingContext ctx, WorkerExecutor workers) {
    Buffer buffer = ctx.body().buffer();
    byte[] body = buffer == null ? new byte[0] : buffer.getBytes();
    workers
        .executeBlocking(() -> answer(body), false)
        .onSuccess(
            a -> {
              if (!ctx.response().ended()) { // else ended at the deadline
                ctx.response()
                    .setStatusCode(a.status())
                    .putHeader(
                        HttpHeaders.CONTENT_TYPE,
                        a.status() == 200 ? "application/json" : "text/plain")
                    .end(a.body());
              }
            })
        .onFailure(ctx::fail);
  }

  /** An HTTP answer: 200 with the AdmissionReview, or 400 with why the body is none. */
  private record Answer(int status, String body) {}

  private Answer answer(byte[] body) throws IOException {
    JsonNode request;
    OpaqueConfigAdmission.Decision decision;
    try {
      request = JSON.readTree(body);
      decision = admission.decide(request);
    } catch (IOException | IllegalArgumentException | NullPointerException e) {
      return new Answer(400, "not an AdmissionReview: " + e.getMessage());
    }
    count(decision);
    if (!decision.allowed()) {
      JsonNode r = request.get("request");
      String namespace = r.path("namespace").asText("");
      String name = r.path("name").asText("");
      // each refusal once, with who and why: the API server's answer to the user has the same
      LOG.infof(
          "refusing %s %s written by %s%s: %s",
          decision.kind(),
          namespace.isEmpty() ? name : namespace + "/" + name,
          r.path("userInfo").path("username").asText("?"),
          r.path("dryRun").asBoolean(false) ? " (dry run)" : "",
          decision.response().getResponse().getStatus().getMessage());
    }
    return new Answer(200, JSON.writeValueAsString(decision.response()));
  }

  private void count(OpaqueConfigAdmission.Decision decision) {
    Counter.builder("kdra.publisher.admission.reviews")
        .description("AdmissionReviews of opaque configs answered, by kind and verdict")
        .tag("kind", OpaqueConfigReview.reviews(decision.kind()) ? decision.kind() : "other")
        .tag("allowed", String.valueOf(decision.allowed()))
        .register(registry)
        .increment();
  }
}
