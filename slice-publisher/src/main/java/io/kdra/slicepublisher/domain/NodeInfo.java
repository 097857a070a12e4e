package io.kdra.slicepublisher.domain;

import java.util.Map;
import java.util.Objects;

/**
 * What the planner needs to know of a Node: its identity for the owner reference and its labels.
 *
 * @param name the node name
 * @param uid the node's UID (the owner reference needs it)
 * @param labels the node's labels
 */
public record NodeInfo(String name, String uid, Map<String, String> labels) {

  public NodeInfo {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(uid, "uid");
    labels = labels == null ? Map.of() : Map.copyOf(labels);
  }
}
