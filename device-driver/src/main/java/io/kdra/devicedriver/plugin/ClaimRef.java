package io.kdra.devicedriver.plugin;

/**
 * A claim as the kubelet names it in NodePrepareResources/NodeUnprepareResources. The UID is the
 * key of every response map; namespace and name locate the ResourceClaim in the API.
 */
public record ClaimRef(String namespace, String uid, String name) {
  public ClaimRef {
    namespace = namespace == null ? "" : namespace;
    uid = uid == null ? "" : uid;
    name = name == null ? "" : name;
  }

  @Override
  public String toString() {
    return namespace + "/" + name + " (uid " + uid + ")";
  }
}
