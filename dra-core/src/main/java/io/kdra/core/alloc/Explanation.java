package io.kdra.core.alloc;

import java.util.ArrayList;
import java.util.List;

/**
 * Why a claim was not allocated, structured for programs and summarised in one line for people
 * ({@link #summary()}). The claim-controller puts the summary on the pod and the claim.
 *
 * @param kind what kind of failure this is
 * @param node the node the explanation is about, or null when it covers all candidate nodes
 * @param requests per request (or subrequest) counts of devices in class, matching, free
 * @param poolIssues incomplete or invalid pools that were skipped
 * @param failingConstraints constraints that no combination of free devices satisfies
 * @param message the error for {@link Kind#FATAL}, {@link Kind#MISSING_CLASS} and the kinds that
 *     refer to other claims or nodes; null otherwise
 * @param request the request the message is about, or null
 * @param expression the selector expression that failed, or null
 */
public record Explanation(
    Kind kind,
    String node,
    List<RequestReport> requests,
    List<PoolIssue> poolIssues,
    List<String> failingConstraints,
    String message,
    String request,
    String expression) {

  /** The kinds of failure. */
  public enum Kind {
    /** Not enough free matching devices, or constraints cannot be met. */
    UNSATISFIABLE,
    /** A request names a DeviceClass that does not exist (upstream: an error). */
    MISSING_CLASS,
    /**
     * An error upstream aborts on: CEL failure, disabled feature, malformed claim, All on an
     * incomplete pool.
     */
    FATAL,
    /** The step budget ran out before the search finished. */
    SEARCH_LIMIT,
    /** This claim could be allocated, but another claim of the same pod could not. */
    BLOCKED_BY_OTHER_CLAIM,
    /** Each claim fits somewhere, but not all of the pod's claims on one node. */
    NO_COMMON_NODE,
    /** No node satisfies the pod's node selector, affinity or node name. */
    NO_MATCHING_NODE,
    /** The pod's search stopped at its deadline ({@link Deadline}) before finding a node. */
    DEADLINE_EXCEEDED
  }

  public Explanation {
    requests = List.copyOf(requests);
    poolIssues = List.copyOf(poolIssues);
    failingConstraints = List.copyOf(failingConstraints);
  }

  static Explanation problem(
      Kind kind, String node, String request, String message, String expression) {
    return new Explanation(
        kind, node, List.of(), List.of(), List.of(), message, request, expression);
  }

  /** The same explanation with a note appended to its message (e.g. nodes excluded). */
  Explanation withNote(String note) {
    String m = message == null ? note : message + "; " + note;
    return new Explanation(
        kind, node, requests, poolIssues, failingConstraints, m, request, expression);
  }

  /**
   * One line, e.g. {@code request "gpu": 12 devices in class "a100-40gb", 3 match the request
   * selectors, 0 free (3 allocated to other claims); pool node-b incomplete (1 of 2 slices)}.
   */
  public String summary() {
    List<String> parts = new ArrayList<>();
    switch (kind) {
      case MISSING_CLASS, FATAL -> {
        String prefix = request == null ? "" : "request \"" + request + "\": ";
        parts.add(prefix + message);
      }
      case SEARCH_LIMIT -> parts.add(message);
      case UNSATISFIABLE -> {
        List<RequestReport> shown = requests.stream().filter(RequestReport::short_).toList();
        if (shown.isEmpty() && failingConstraints.isEmpty()) {
          shown = requests;
        }
        shown.forEach(r -> parts.add(r.describe()));
        failingConstraints.forEach(c -> parts.add("constraint " + c + " cannot be satisfied"));
        if (message != null) {
          parts.add(message);
        }
      }
      case NO_COMMON_NODE -> {
        requests.forEach(r -> parts.add(r.describe()));
        parts.add(message);
      }
      default -> parts.add(message);
    }
    if (kind == Kind.UNSATISFIABLE || kind == Kind.SEARCH_LIMIT) {
      poolIssues.forEach(p -> parts.add(p.describe()));
    }
    if (node != null && kind != Kind.MISSING_CLASS && kind != Kind.FATAL) {
      parts.add("on node " + node);
    }
    return String.join("; ", parts);
  }
}
