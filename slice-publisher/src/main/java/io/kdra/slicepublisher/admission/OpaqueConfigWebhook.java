package io.kdra.slicepublisher.admission;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kdra.slicepublisher.config.PublisherConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import org.jboss.logging.Logger;

/**
 * The validating admission webhook for our drivers' opaque configs: {@code POST} {@value #PATH}
 * with an {@code admission.k8s.io/v1} AdmissionReview, answered by {@link OpaqueConfigAdmission}
 * for the driver names the publisher serves ({@code publisher.drivers}). Served on the HTTP
 * server's ports, HTTPS included when a certificate is configured (the chart's webhook port: the
 * API server calls webhooks over TLS only). A Vert.x route, not a REST resource: one POST needs no
 * REST extension. Every replica answers, leader or not: a review reads nothing but the request.
 */
@ApplicationScoped
public class OpaqueConfigWebhook {

  /** The webhook's path, as the chart's ValidatingWebhookConfiguration names it. */
  public static final String PATH = "/admission/opaque-config";

  /** An AdmissionReview holds the object and the old one; objects are at most 1.5 MiB in etcd. */
  private static final long MAX_BODY = 4L * 1024 * 1024;

  private static final Logger LOG = Logger.getLogger(OpaqueConfigWebhook.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final OpaqueConfigAdmission admission;
  private final MeterRegistry registry;

  @Inject
  public OpaqueConfigWebhook(PublisherConfig config, MeterRegistry registry) {
    this.admission = new OpaqueConfigAdmission(new OpaqueConfigReview(config.drivers()));
    this.registry = registry;
  }

  void routes(@Observes Router router) {
    router.post(PATH).handler(BodyHandler.create().setBodyLimit(MAX_BODY)).handler(this::review);
  }

  private void review(RoutingContext ctx) {
    JsonNode request;
    OpaqueConfigAdmission.Decision decision;
    try {
      request = JSON.readTree(ctx.body().buffer().getBytes());
      decision = admission.decide(request);
    } catch (IOException | IllegalArgumentException | NullPointerException e) {
      ctx.response().setStatusCode(400).end("not an AdmissionReview: " + e.getMessage());
      return;
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
    try {
      ctx.response()
          .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
          .end(JSON.writeValueAsString(decision.response()));
    } catch (IOException e) {
      ctx.fail(e);
    }
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
