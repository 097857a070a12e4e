package io.kdra.it.services;

import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReviewBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.support.TestCa;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A validating admission webhook the test serves, which holds the status writes of one
 * ResourceClaim at the API server until the test answers them: it tells the moment a write has
 * reached the API server and is not stored yet, which no clock can find. Every other update of a
 * claim labelled {@link #LABEL} is allowed at once; claims without the label are never sent to it.
 * Closing it deletes its configuration and allows what it still holds.
 */
public final class ClaimWriteGate implements AutoCloseable {

  /** The label whose claims the API server sends to the gate. */
  public static final String LABEL = "kdra.io/it-write-gate";

  private static final char[] PASSWORD = "gate".toCharArray();

  private final KubernetesClient client;
  private final String claim;
  private final String configuration;
  private final HttpsServer server;
  private final ExecutorService handlers =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "write-gate");
            t.setDaemon(true);
            return t;
          });
  private final Set<String> seen = ConcurrentHashMap.newKeySet();
  private final CountDownLatch held = new CountDownLatch(1);
  private final CompletableFuture<Boolean> verdict = new CompletableFuture<>();

  private ClaimWriteGate(KubernetesClient client, String claim, String configuration)
      throws IOException {
    this.client = client;
    this.claim = claim;
    this.configuration = configuration;
    this.server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
  }

  /**
   * A gate for the status writes of claim {@code namespace/name}, in effect once the API server
   * calls it ({@link #awaitEffective}); {@code failOpen}: the API server stores the write when the
   * gate does not answer in time (failurePolicy {@code Ignore}), else refuses it ({@code Fail}), so
   * that the outcome the test chose holds either way.
   */
  public static ClaimWriteGate start(
      KubernetesClient client, String namespace, String name, boolean failOpen) {
    TestCa ca = TestCa.create("kdra-it-write-gate");
    try {
      ClaimWriteGate gate =
          new ClaimWriteGate(client, namespace + "/" + name, "kdra-it-write-gate-" + name);
      KeyManagerFactory keys =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(ca.loopbackKeyStore(PASSWORD), PASSWORD);
      SSLContext ssl = SSLContext.getInstance("TLS");
      ssl.init(keys.getKeyManagers(), null, null);
      gate.server.setHttpsConfigurator(new HttpsConfigurator(ssl));
      gate.server.setExecutor(gate.handlers);
      gate.server.createContext("/", gate::handle);
      gate.server.start();
      client.resource(gate.configuration(ca, failOpen)).create();
      return gate;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Waits until the API server calls the gate: {@code touch}es the claim (an update that the gate
   * allows) until the gate has seen one, since a new webhook configuration takes effect a moment
   * after its creation.
   */
  public void awaitEffective(Runnable touch) {
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              touch.run();
              return seen.contains(claim);
            });
  }

  /** Waits until a status write of the claim is held at the API server. */
  public void awaitHeld(Duration atMost) throws InterruptedException {
    if (!held.await(atMost.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("no status write of claim " + claim + " reached the gate");
    }
  }

  /** Answers the held write, and every later one of the claim: stored, or refused. */
  public void answer(boolean allow) {
    verdict.complete(allow);
  }

  @Override
  public void close() {
    verdict.complete(true);
    client
        .resources(ValidatingWebhookConfiguration.class)
        .withName(configuration)
        .withTimeout(30, TimeUnit.SECONDS)
        .delete();
    server.stop(0);
    handlers.shutdownNow();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      AdmissionRequest request =
          Serialization.unmarshal(exchange.getRequestBody(), AdmissionReview.class).getRequest();
      String key = request.getNamespace() + "/" + request.getName();
      seen.add(key);
      boolean allowed = true;
      if (key.equals(claim) && "status".equals(request.getSubResource())) {
        held.countDown();
        allowed = verdict.join();
      }
      AdmissionReview review =
          new AdmissionReviewBuilder()
              .withNewResponse()
              .withUid(request.getUid())
              .withAllowed(allowed)
              .withStatus(
                  allowed
                      ? null
                      : new StatusBuilder()
                          .withStatus("Failure")
                          .withCode(403)
                          .withMessage("refused by the test's write gate")
                          .build())
              .endResponse()
              .build();
      byte[] body = Serialization.asJson(review).getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  private ValidatingWebhookConfiguration configuration(TestCa ca, boolean failOpen) {
    return new ValidatingWebhookConfigurationBuilder()
        .withNewMetadata()
        .withName(configuration)
        .endMetadata()
        .addNewWebhook()
        .withName("write-gate.it.kdra.io")
        .withNewClientConfig()
        .withUrl("https://127.0.0.1:" + server.getAddress().getPort() + "/")
        .withCaBundle(Base64.getEncoder().encodeToString(ca.certificate()))
        .endClientConfig()
        .addNewRule()
        .withApiGroups("resource.k8s.io")
        .withApiVersions("*")
        .withOperations("UPDATE")
        .withResources("resourceclaims", "resourceclaims/status")
        .withScope("Namespaced")
        .endRule()
        .withNewObjectSelector()
        .withMatchLabels(Map.of(LABEL, "true"))
        .endObjectSelector()
        .withFailurePolicy(failOpen ? "Ignore" : "Fail")
        .withSideEffects("None")
        .withAdmissionReviewVersions("v1")
        .withTimeoutSeconds(30)
        .endWebhook()
        .build();
  }

  /** {@code claim} labelled for the gate. */
  public static ResourceClaim gated(ResourceClaim claim) {
    claim.getMetadata().setLabels(Map.of(LABEL, "true"));
    return claim;
  }
}
