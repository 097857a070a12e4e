package io.kdra.helmtests;

import io.fabric8.kubernetes.api.model.Capabilities;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SeccompProfile;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The rules of the Pod Security Standards' {@code restricted} profile (Kubernetes 1.34, which
 * includes every {@code baseline} rule) that a pod spec can break, as the API server's Pod Security
 * admission checks them. Pure: a pod spec in, the broken rules out.
 */
final class RestrictedProfile {

  /** The volume types restricted allows; every other one (hostPath first of all) is refused. */
  private static final Set<String> VOLUME_TYPES =
      Set.of(
          "configMap",
          "csi",
          "downwardAPI",
          "emptyDir",
          "ephemeral",
          "persistentVolumeClaim",
          "projected",
          "secret");

  private RestrictedProfile() {}

  /** Every rule the pod breaks, one line each; empty when restricted admits it. */
  static List<String> violations(PodSpec pod) {
    List<String> out = new ArrayList<>();
    if (Boolean.TRUE.equals(pod.getHostNetwork())
        || Boolean.TRUE.equals(pod.getHostPID())
        || Boolean.TRUE.equals(pod.getHostIPC())) {
      out.add("host namespaces (hostNetwork, hostPID or hostIPC)");
    }
    for (Volume v : pod.getVolumes()) {
      String type = volumeType(v);
      if (!VOLUME_TYPES.contains(type)) {
        out.add("volume " + v.getName() + " of type " + type);
      }
    }
    PodSecurityContext podContext =
        pod.getSecurityContext() == null ? new PodSecurityContext() : pod.getSecurityContext();
    if (podContext.getSysctls() != null && !podContext.getSysctls().isEmpty()) {
      out.add("sysctls");
    }
    if (isZero(podContext.getRunAsUser())) {
      out.add("pod runAsUser 0");
    }
    if (Boolean.FALSE.equals(podContext.getRunAsNonRoot())) {
      out.add("pod runAsNonRoot false");
    }
    if (unconfined(podContext.getSeccompProfile())) {
      out.add("pod seccompProfile Unconfined");
    }
    List<Container> containers =
        Stream.of(pod.getInitContainers(), pod.getContainers())
            .filter(l -> l != null)
            .flatMap(List::stream)
            .toList();
    for (Container c : containers) {
      String name = "container " + c.getName() + ": ";
      SecurityContext sc =
          c.getSecurityContext() == null ? new SecurityContext() : c.getSecurityContext();
      if (Boolean.TRUE.equals(sc.getPrivileged())) {
        out.add(name + "privileged");
      }
      if (!Boolean.FALSE.equals(sc.getAllowPrivilegeEscalation())) {
        out.add(name + "allowPrivilegeEscalation not false");
      }
      Capabilities caps = sc.getCapabilities();
      if (caps == null || caps.getDrop() == null || !caps.getDrop().contains("ALL")) {
        out.add(name + "capabilities do not drop ALL");
      }
      if (caps != null
          && caps.getAdd() != null
          && caps.getAdd().stream().anyMatch(a -> !a.equals("NET_BIND_SERVICE"))) {
        out.add(name + "capabilities add more than NET_BIND_SERVICE");
      }
      boolean nonRoot =
          sc.getRunAsNonRoot() != null
              ? sc.getRunAsNonRoot()
              : Boolean.TRUE.equals(podContext.getRunAsNonRoot());
      if (!nonRoot) {
        out.add(name + "runAsNonRoot not true (neither the container's nor the pod's)");
      }
      if (isZero(sc.getRunAsUser())) {
        out.add(name + "runAsUser 0");
      }
      SeccompProfile seccomp =
          sc.getSeccompProfile() != null ? sc.getSeccompProfile() : podContext.getSeccompProfile();
      if (seccomp == null || !Set.of("RuntimeDefault", "Localhost").contains(seccomp.getType())) {
        out.add(name + "seccompProfile neither RuntimeDefault nor Localhost");
      }
      if (sc.getProcMount() != null && !sc.getProcMount().equals("Default")) {
        out.add(name + "procMount " + sc.getProcMount());
      }
      for (ContainerPort p : c.getPorts() == null ? List.<ContainerPort>of() : c.getPorts()) {
        if (p.getHostPort() != null && p.getHostPort() != 0) {
          out.add(name + "hostPort " + p.getHostPort());
        }
      }
    }
    return out;
  }

  private static boolean isZero(Long uid) {
    return uid != null && uid == 0L;
  }

  private static boolean unconfined(SeccompProfile p) {
    return p != null && "Unconfined".equals(p.getType());
  }

  private static String volumeType(Volume v) {
    if (v.getHostPath() != null) {
      return "hostPath";
    }
    if (v.getConfigMap() != null) {
      return "configMap";
    }
    if (v.getSecret() != null) {
      return "secret";
    }
    if (v.getEmptyDir() != null) {
      return "emptyDir";
    }
    if (v.getProjected() != null) {
      return "projected";
    }
    if (v.getDownwardAPI() != null) {
      return "downwardAPI";
    }
    if (v.getCsi() != null) {
      return "csi";
    }
    if (v.getEphemeral() != null) {
      return "ephemeral";
    }
    if (v.getPersistentVolumeClaim() != null) {
      return "persistentVolumeClaim";
    }
    return "another type";
  }
}
