package io.kdra.core.alloc;

import java.util.ArrayList;
import java.util.List;

/**
 * Device counts for one request or subrequest, over the pools an explanation covers.
 *
 * @param request {@code req} or {@code req/sub}
 * @param deviceClass the class name
 * @param needed devices needed ({@code count}; for All, the number of matching devices)
 * @param all whether the request is allocation mode All
 * @param inClass usable devices that satisfy the class selectors
 * @param matching of those, devices that also satisfy the request selectors (and define every
 *     requested capacity)
 * @param free of those, devices that are available now
 * @param allocatedToOthers matching devices held by other claims
 * @param filtered whether the request narrows its class at all (selectors or capacity requests);
 *     when not, every device in the class matches and the report says nothing of request selectors
 * @param tainted matching devices with a taint the request does not tolerate
 * @param blockingTaint one such taint, as {@code key=value:Effect}, or null when none
 * @param noCounters matching devices whose shared counters are used up
 * @param noCapacity matching devices without enough remaining capacity
 * @param skippingNodeOperations how many matching devices skip node operations that this node or
 *     the gates do not allow, and why ({@code 2 skip node operations, which ...}); null when none
 */
public record RequestReport(
    String request,
    String deviceClass,
    long needed,
    boolean all,
    int inClass,
    boolean filtered,
    int matching,
    int free,
    int allocatedToOthers,
    int tainted,
    String blockingTaint,
    int noCounters,
    int noCapacity,
    String skippingNodeOperations) {

  /** Fewer free devices than needed (All needs at least one, and every match free). */
  boolean short_() {
    return all ? matching == 0 || free < matching : free < needed;
  }

  String describe() {
    StringBuilder b = new StringBuilder();
    b.append("request \"")
        .append(request)
        .append("\": ")
        .append(inClass)
        .append(inClass == 1 ? " device" : " devices")
        .append(" in class \"")
        .append(deviceClass)
        .append("\", ");
    if (filtered) {
      b.append(matching)
          .append(matching == 1 ? " matches" : " match")
          .append(" the request selectors, ");
    }
    b.append(free).append(" free");
    List<String> why = new ArrayList<>();
    if (allocatedToOthers > 0) {
      why.add(allocatedToOthers + " allocated to other claims");
    }
    if (skippingNodeOperations != null) {
      why.add(skippingNodeOperations);
    }
    if (tainted > 0) {
      why.add(
          tainted + " tainted, e.g. " + blockingTaint + ", which the request does not tolerate");
    }
    if (noCounters > 0) {
      why.add(noCounters + " without free shared counters");
    }
    if (noCapacity > 0) {
      why.add(noCapacity + " without enough capacity");
    }
    if (!why.isEmpty()) {
      b.append(" (").append(String.join(", ", why)).append(')');
    }
    if (all) {
      b.append(", all needed");
    } else if (needed != 1) {
      b.append(", ").append(needed).append(" needed");
    }
    return b.toString();
  }
}
