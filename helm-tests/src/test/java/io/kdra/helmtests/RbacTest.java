package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleRef;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each ServiceAccount is granted exactly what its service's pages under docs/user/ say it needs: no
 * more (least privilege), no less (the service would fail). Grants are written {@code
 * group/resource:verb}, the core group as an empty group.
 */
class RbacTest {

  static final Set<String> RW = Set.of("get", "list", "watch", "create", "update", "delete");
  static final Set<String> READ = Set.of("get", "list", "watch");

  /**
   * fabric8's LeaderElector creates, reads and patches the Lease; the leader releases it on
   * shutdown with an update, which the Java Operator SDK also checks for before it starts; a
   * replica watches its Lease by name before it writes (LeaseFence).
   */
  static final Set<String> LEASE = Set.of("get", "list", "watch", "create", "patch", "update");

  /**
   * device-driver, "Running it on a node": get and list (no watch) on resourceclaims; get on nodes
   * for tpu.
   */
  static final Set<String> DRIVER_READS =
      grants("resource.k8s.io/resourceclaims", Set.of("get", "list"));

  /**
   * ... and, with kdra.device-driver.claim-device-status on (the default), its claims'
   * status.devices: the status patch, and upstream's per-driver check on the synthetic
   * resourceclaims/driver for its own node's claims only (associated-node), never arbitrary-node.
   */
  static final Set<String> DRIVER =
      union(
          DRIVER_READS,
          grants("resource.k8s.io/resourceclaims/status", Set.of("patch")),
          grants("resource.k8s.io/resourceclaims/driver", Set.of("associated-node:patch")));

  /**
   * slice-publisher, "RBAC it needs". No pods: every token a supported API server (1.34+) issues
   * names its node, so the publisher never looks up the token's pod.
   */
  static final Set<String> PUBLISHER =
      union(
          grants("resource.k8s.io/resourceslices", RW),
          grants("/nodes", READ),
          grants("authentication.k8s.io/tokenreviews", Set.of("create")),
          grants("coordination.k8s.io/leases", LEASE));

  /** claim-controller, "What to look at": "RBAC the controller needs". */
  static final Set<String> CONTROLLER =
      union(
          grants("/pods", union(READ, Set.of("delete"))),
          grants("/pods/status", Set.of("update")),
          grants("/pods/binding", Set.of("create")),
          grants("policy/poddisruptionbudgets", Set.of("list")),
          grants("resource.k8s.io/devicetaintrules", READ),
          grants("resource.k8s.io/devicetaintrules/status", Set.of("update")),
          grants(
              "resource.k8s.io/resourceclaims",
              Set.of("get", "list", "watch", "create", "patch", "delete")),
          grants("resource.k8s.io/resourceclaims/status", Set.of("update")),
          grants("resource.k8s.io/resourceclaims/binding", Set.of("update")),
          grants("resource.k8s.io/resourceclaimtemplates", READ),
          grants("resource.k8s.io/resourceslices", READ),
          grants("resource.k8s.io/deviceclasses", READ),
          grants("/nodes", READ),
          grants("/namespaces", READ),
          grants("/persistentvolumeclaims", union(READ, Set.of("update"))),
          grants("/persistentvolumes", union(READ, Set.of("update"))),
          grants("storage.k8s.io/storageclasses", READ),
          grants("storage.k8s.io/csinodes", READ),
          grants("storage.k8s.io/csidrivers", READ),
          grants("storage.k8s.io/csistoragecapacities", READ),
          grants("scheduling.k8s.io/podgroups", READ),
          grants("scheduling.k8s.io/podgroups/status", Set.of("patch")),
          grants("/events", Set.of("create")),
          grants("nonResourceURL:/metrics", Set.of("get")),
          grants("coordination.k8s.io/leases", LEASE));

  /**
   * computeclass-bridge, "Permissions". No ConfigMaps unless a catalog ConfigMap is named: then
   * that one, in its namespace ({@link #theBridgeReadsItsCatalogByNameInItsNamespaceOnly}).
   */
  static final Set<String> BRIDGE =
      union(
          grants(
              "cloud.google.com/computeclasses", Set.of("get", "list", "watch", "update", "patch")),
          grants("cloud.google.com/computeclasses/status", Set.of("get", "update", "patch")),
          grants("resource.k8s.io/deviceclasses", union(RW, Set.of("patch"))),
          grants("resource.k8s.io/resourceclaimtemplates", union(RW, Set.of("patch"))),
          grants("/namespaces", READ),
          grants("/events", Set.of("create", "patch")),
          grants("events.k8s.io/events", Set.of("create", "patch")),
          grants("coordination.k8s.io/leases", LEASE));

  static Stream<Arguments> services() {
    return Stream.of(
        Arguments.of("device-driver", DRIVER, List.of("resourceclaims")),
        Arguments.of(
            "slice-publisher",
            PUBLISHER,
            List.of("resourceslices", "nodes", "tokenreviews", "leases")),
        Arguments.of(
            "claim-controller",
            CONTROLLER,
            List.of(
                "pods/status",
                "pods/binding",
                "poddisruptionbudgets",
                "resourceclaims/status",
                "resourceclaims/binding",
                "resourceclaimtemplates",
                "deviceclasses",
                "devicetaintrules/status",
                "namespaces",
                "persistentvolumeclaims",
                "persistentvolumes",
                "storageclasses",
                "csinodes",
                "csidrivers",
                "csistoragecapacities",
                "podgroups",
                "podgroups/status",
                "events",
                "`/metrics`",
                "leases")),
        Arguments.of(
            "computeclass-bridge",
            BRIDGE,
            List.of(
                "ComputeClasses",
                "DeviceClasses",
                "ResourceClaimTemplates",
                "namespaces",
                "ConfigMaps",
                "Events",
                "leases")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("services")
  void grantsExactlyWhatTheDocsList(String service, Set<String> expected, List<String> doc)
      throws IOException {
    List<HasMetadata> objects =
        Chart.render(Chart.values("computeClassBridge.enabled", true, "cluster.gke", true));
    assertThat(granted(objects, "kdra-" + service)).isEqualTo(new TreeSet<>(expected));
    String section = servicePages(service);
    assertThat(section).as("docs/user/ pages of %s", service).contains(doc);
  }

  @Test
  void theDriverWritesDeviceStatusOnlyUnderItsOwnDriverName() {
    List<HasMetadata> objects = Chart.render(Chart.values());
    PolicyRule driverRule =
        Rendered.one(objects, ClusterRole.class, "kdra-device-driver").getRules().stream()
            .filter(r -> r.getResources().contains("resourceclaims/driver"))
            .findFirst()
            .orElseThrow();
    assertThat(driverRule.getResources()).containsExactly("resourceclaims/driver");
    assertThat(driverRule.getResourceNames()).containsExactly("gpu.kdra.io");
    assertThat(
            granted(
                Chart.render(Chart.values("deviceDriver.config.claim-device-status", false)),
                "kdra-device-driver"))
        .isEqualTo(new TreeSet<>(DRIVER_READS));
  }

  @Test
  void theTpuDriverMayAlsoReadNodes() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values("deviceDriver.backend", "tpu", "deviceDriver.hostDevices.enabled", true));
    assertThat(granted(objects, "kdra-device-driver"))
        .isEqualTo(new TreeSet<>(union(DRIVER, grants("/nodes", Set.of("get")))));
  }

  /** computeclass-bridge, "Scale-out": NodePools, only when scale-out is on. */
  @Test
  void theBridgeWritesNodePoolsOnlyWithScaleOutOn() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "computeClassBridge.enabled",
                true,
                "cluster.gke",
                true,
                "computeClassBridge.config.scale-out.enabled",
                true));
    assertThat(granted(objects, "kdra-computeclass-bridge"))
        .isEqualTo(
            union(
                BRIDGE,
                grants(
                    "karpenter.sh/nodepools",
                    Set.of("get", "list", "create", "update", "delete"))));
  }

  @Test
  void theBridgeReadsItsCatalogByNameInItsNamespaceOnly() {
    List<HasMetadata> objects =
        Chart.render(
            Chart.values(
                "computeClassBridge.enabled",
                true,
                "cluster.gke",
                true,
                "computeClassBridge.config.catalog.config-map",
                "catalog",
                "computeClassBridge.config.catalog.config-map-namespace",
                "gpu-config"));
    Role role = Rendered.one(objects, Role.class, "kdra-computeclass-bridge-catalog");
    assertThat(role.getMetadata().getNamespace()).isEqualTo("gpu-config");
    // its informer lists and watches with a metadata.name field selector, never gets
    assertThat(role.getRules())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getResources()).containsExactly("configmaps");
              assertThat(r.getResourceNames()).containsExactly("catalog");
              assertThat(r.getVerbs()).containsExactlyInAnyOrder("list", "watch");
            });
    RoleBinding binding =
        Rendered.one(objects, RoleBinding.class, "kdra-computeclass-bridge-catalog");
    assertThat(binding.getMetadata().getNamespace()).isEqualTo("gpu-config");
    assertThat(granted(objects, "kdra-computeclass-bridge"))
        .isEqualTo(union(BRIDGE, grants("/configmaps", Set.of("list", "watch"))));
    // the catalog's namespace defaults to the release's
    Role inRelease =
        Rendered.one(
            Chart.render(Chart.fullValues()), Role.class, "kdra-full-computeclass-bridge-catalog");
    assertThat(inRelease.getMetadata().getNamespace()).isEqualTo(Chart.NAMESPACE);
    assertThat(inRelease.getRules().get(0).getResourceNames())
        .containsExactly("kdra-accelerator-catalog");
  }

  @Test
  void leasesAreNamespacedAndRenewedOnlyByName() {
    List<HasMetadata> objects = Chart.render(Chart.fullValues());
    Role role = Rendered.one(objects, Role.class, "kdra-full-slice-publisher-leader-election");
    assertThat(role.getMetadata().getNamespace()).isEqualTo("kdra-leases");
    assertThat(role.getRules())
        .filteredOn(r -> r.getVerbs().contains("patch"))
        .singleElement()
        .satisfies(r -> assertThat(r.getResourceNames()).containsExactly("kdra-full-publisher"));
    RoleBinding binding =
        Rendered.one(objects, RoleBinding.class, "kdra-full-slice-publisher-leader-election");
    assertThat(binding.getMetadata().getNamespace()).isEqualTo("kdra-leases");
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(s -> assertThat(s.getNamespace()).isEqualTo(Chart.NAMESPACE));
    assertThat(granted(objects, "kdra-full-slice-publisher")).isEqualTo(new TreeSet<>(PUBLISHER));
    Role bridge =
        Rendered.one(objects, Role.class, "kdra-full-computeclass-bridge-leader-election");
    assertThat(bridge.getMetadata().getNamespace()).isEqualTo("kdra-leases");
    assertThat(bridge.getRules())
        .filteredOn(r -> r.getVerbs().contains("update"))
        .singleElement()
        .satisfies(r -> assertThat(r.getResourceNames()).containsExactly("kdra-full-bridge"));
  }

  @Test
  void anExistingServiceAccountIsBoundButNotCreated() {
    List<HasMetadata> objects = Chart.render(Chart.fullValues());
    assertThat(objects)
        .noneMatch(
            o ->
                o.getKind().equals("ServiceAccount")
                    && o.getMetadata().getName().equals("existing-scheduler"));
    assertThat(granted(objects, "existing-scheduler")).isEqualTo(new TreeSet<>(CONTROLLER));
  }

  @Test
  void noRbacWhenTurnedOff() {
    assertThat(Chart.render(Chart.values("rbac.create", false)))
        .noneMatch(o -> o.getKind().contains("Role"));
  }

  /** Every rule that writes carries a comment saying why (the rule's own or its group's). */
  @Test
  void everyWritingRuleIsExplained() throws IOException {
    try (Stream<Path> files = Files.list(Chart.DIR.resolve("templates/rbac"))) {
      // the leader-election Role lives in _helpers.tpl (kdra.leaseRole)
      for (Path f :
          Stream.concat(files, Stream.of(Chart.DIR.resolve("templates/_helpers.tpl"))).toList()) {
        List<String> lines = Files.readAllLines(f);
        for (int i = 0; i < lines.size(); i++) {
          if (!lines.get(i).trim().startsWith("- apiGroups:")) {
            continue;
          }
          String rule = String.join("\n", lines.subList(i, Math.min(i + 4, lines.size())));
          if (!rule.matches("(?s).*verbs: \\[[^]]*\"(create|update|patch|delete)\".*")) {
            continue;
          }
          List<String> above = lines.subList(Math.max(0, i - 4), i);
          assertThat(above)
              .as("%s line %d: a comment above the rule", f.getFileName(), i + 1)
              .anyMatch(l -> l.trim().startsWith("#"));
        }
      }
    }
  }

  /** Everything granted to this ServiceAccount by the chart's bindings. */
  static Set<String> granted(List<HasMetadata> objects, String serviceAccount) {
    List<RoleRef> refs = new ArrayList<>();
    for (HasMetadata o : objects) {
      List<Subject> subjects =
          o instanceof ClusterRoleBinding b
              ? b.getSubjects()
              : o instanceof RoleBinding b ? b.getSubjects() : List.of();
      if (subjects.stream()
          .anyMatch(
              s ->
                  s.getKind().equals("ServiceAccount")
                      && s.getName().equals(serviceAccount)
                      && s.getNamespace().equals(Chart.NAMESPACE))) {
        refs.add(
            o instanceof ClusterRoleBinding b ? b.getRoleRef() : ((RoleBinding) o).getRoleRef());
      }
    }
    Set<String> out = new TreeSet<>();
    for (RoleRef ref : refs) {
      List<PolicyRule> rules =
          ref.getKind().equals("ClusterRole")
              ? Rendered.one(objects, ClusterRole.class, ref.getName()).getRules()
              : Rendered.one(objects, Role.class, ref.getName()).getRules();
      for (PolicyRule r : rules) {
        for (String g : r.getApiGroups()) {
          for (String res : r.getResources()) {
            for (String v : r.getVerbs()) {
              out.add(g + "/" + res + ":" + v);
            }
          }
        }
        for (String url : r.getNonResourceURLs()) {
          for (String v : r.getVerbs()) {
            out.add("nonResourceURL:" + url + ":" + v);
          }
        }
      }
    }
    return out;
  }

  static Set<String> grants(String resource, Set<String> verbs) {
    Set<String> out = new TreeSet<>();
    verbs.forEach(v -> out.add(resource + ":" + v));
    return out;
  }

  @SafeVarargs
  static Set<String> union(Set<String>... sets) {
    Set<String> out = new TreeSet<>();
    for (Set<String> s : sets) {
      out.addAll(s);
    }
    return out;
  }

  /** The user pages of each service: its own, and for the driver those on sharing and MIG. */
  private static final Map<String, List<String>> SERVICE_PAGES =
      Map.of(
          "device-driver", List.of("device-driver.md", "sharing.md", "mig.md"),
          "slice-publisher", List.of("slice-publisher.md"),
          "claim-controller", List.of("claim-controller.md"),
          "computeclass-bridge", List.of("computeclass.md"));

  /** The text of a service's pages under docs/user/, which document its properties and grants. */
  static String servicePages(String service) throws IOException {
    List<String> pages = SERVICE_PAGES.get(service);
    assertThat(pages).as("docs/user/ pages of %s", service).isNotNull();
    StringBuilder text = new StringBuilder();
    for (String page : pages) {
      text.append(Files.readString(Chart.DIR.resolve("../../docs/user/" + page).normalize()));
    }
    return text.toString();
  }
}
