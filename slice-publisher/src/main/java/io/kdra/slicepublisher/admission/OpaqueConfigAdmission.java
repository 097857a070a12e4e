package io.kdra.slicepublisher.admission;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.api.model.StatusCauseBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponseBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReviewBuilder;
import io.kdra.core.config.OpaqueConfigException;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Answers one {@code admission.k8s.io/v1} AdmissionReview of the opaque-config webhook: allowed, or
 * refused with 422 Invalid, every error of our drivers' configs in the message (joined by "; ", as
 * the chart's ValidatingAdmissionPolicy joins them) and one cause per error with its field path.
 * Not ours to judge, so allowed: other kinds, deletes and connects, and updates that leave the spec
 * alone (finalizers, labels), so that objects written before the webhook can still be finished and
 * deleted. Pure and thread-safe.
 */
public final class OpaqueConfigAdmission {

  /**
   * The message is cut here: a claim may carry 32 configs of 10 KiB each, and the policy cuts at
   * the same length, so both refuse with the same words.
   */
  static final int MAX_MESSAGE = 2000;

  private final OpaqueConfigReview review;

  public OpaqueConfigAdmission(OpaqueConfigReview review) {
    this.review = review;
  }

  /** What was decided about one request, for the response, the log and the metrics. */
  public record Decision(
      AdmissionReview response, String kind, List<OpaqueConfigException> errors) {
    public boolean allowed() {
      return errors.isEmpty();
    }
  }

  /**
   * @param request the AdmissionReview the API server sent, as JSON (its {@code object} exactly as
   *     written, nulls included, which the decoder distinguishes from absent fields)
   * @throws IllegalArgumentException when it is not an AdmissionReview with a request and a uid
   */
  public Decision decide(JsonNode request) {
    JsonNode r = request == null ? null : request.get("request");
    if (r == null || !r.isObject() || r.path("uid").asText("").isEmpty()) {
      throw new IllegalArgumentException(
          "not an admission.k8s.io/v1 AdmissionReview with a " + "request and its uid");
    }
    String uid = r.path("uid").asText();
    String kind = r.path("kind").path("kind").asText("");
    String operation = r.path("operation").asText("");
    JsonNode object = r.get("object");
    boolean specWritten =
        operation.equals("CREATE")
            || (operation.equals("UPDATE")
                && !Objects.equals(
                    object == null ? null : object.get("spec"), r.path("oldObject").get("spec")));
    List<OpaqueConfigException> errors =
        specWritten && OpaqueConfigReview.reviews(kind) ? review.errors(kind, object) : List.of();
    return new Decision(response(uid, errors), kind, errors);
  }

  private static AdmissionReview response(String uid, List<OpaqueConfigException> errors) {
    AdmissionResponse response;
    if (errors.isEmpty()) {
      response = new AdmissionResponseBuilder().withUid(uid).withAllowed(true).build();
    } else {
      List<StatusCause> causes =
          errors.stream()
              .map(
                  e ->
                      new StatusCauseBuilder()
                          .withReason("FieldValueInvalid")
                          .withField(e.field())
                          .withMessage(e.problem())
                          .build())
              .toList();
      response =
          new AdmissionResponseBuilder()
              .withUid(uid)
              .withAllowed(false)
              .withStatus(
                  new StatusBuilder()
                      .withStatus("Failure")
                      .withCode(422)
                      .withReason("Invalid")
                      .withMessage(message(errors))
                      .withNewDetails()
                      .withCauses(causes)
                      .endDetails()
                      .build())
              .build();
    }
    return new AdmissionReviewBuilder()
        .withApiVersion("admission.k8s.io/v1")
        .withKind("AdmissionReview")
        .withResponse(response)
        .build();
  }

  /** Every error, joined, cut at {@link #MAX_MESSAGE} characters. */
  static String message(List<OpaqueConfigException> errors) {
    String all = errors.stream().map(Exception::getMessage).collect(Collectors.joining("; "));
    return all.length() <= MAX_MESSAGE
        ? all
        : all.substring(0, MAX_MESSAGE) + " ... (cut at " + MAX_MESSAGE + " characters)";
  }
}
