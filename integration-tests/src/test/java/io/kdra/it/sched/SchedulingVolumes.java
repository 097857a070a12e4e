package io.kdra.it.sched;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TopologySelectorTermBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSIDriverBuilder;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSINodeBuilder;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacityBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.kdra.claimcontroller.domain.VolumeObjects;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The volume side of a scheduling scenario: PersistentVolumeClaims, PersistentVolumes,
 * StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities for kube-scheduler's
 * VolumeRestrictions, NodeVolumeLimits, VolumeBinding and VolumeZone.
 */
public record SchedulingVolumes(
    List<PersistentVolumeClaim> pvcs,
    List<PersistentVolume> pvs,
    List<StorageClass> storageClasses,
    List<CSINode> csiNodes,
    List<CSIDriver> csiDrivers,
    List<CSIStorageCapacity> capacities) {

  public static final SchedulingVolumes NONE =
      new SchedulingVolumes(List.of(), List.of(), List.of(), List.of(), List.of(), List.of());

  /** As the claim-controller's volume filters read them. */
  public VolumeObjects objects() {
    return VolumeObjects.of(pvcs, pvs, storageClasses, csiNodes, csiDrivers, capacities);
  }

  static final String DRIVER = "csi.kdra.example";
  static final List<String> ZONES = List.of("z1", "z2", "z3");
  static final List<String> ZONE_KEYS =
      List.of("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone");
  // no class without a binding mode: the API server defaults it to Immediate, and upstream's
  // VolumeBinding answers such a class with a scheduler error, not a verdict
  static final List<String> CLASSES = List.of("imm", "wffc", "wffc-none", "gone", "");

  static final List<String> SIZES = List.of("500M", "1Gi", "1500M", "5Gi", "10Gi");
  static final List<String> CAPACITIES = List.of("500M", "1Gi", "4Gi", "5Gi", "8Gi", "100Gi");

  /**
   * Draws volumes for {@code pod} (and some of {@code placed}) on {@code nodes} from {@code r}, a
   * stream of its own so that the scenario's other draws stay as they were; the pod and the placed
   * pods get their volumes added. From {@code storage}, a further stream (so that the draws from
   * {@code r} stay as they were): for half the pods one more claim waiting for its first consumer,
   * the claims' storage requests, the provisioner's CSIDriver and CSIStorageCapacities
   * (VolumeBinding's capacity check of a claim to be provisioned). From {@code existing}, one more:
   * PersistentVolumes of the classes that wait for their first consumer, for VolumeBinding to bind
   * the pod's unbound claims to ({@link #existingVolumes}), and the claims' selectors, volume modes
   * and access modes that pick among them.
   */
  static SchedulingVolumes draw(
      Random r, Random storage, Random existing, List<Node> nodes, List<Pod> placed, Pod pod) {
    SchedulingVolumes drawn = draw(r, nodes, placed, pod);
    List<PersistentVolumeClaim> pvcs = new ArrayList<>(drawn.pvcs());
    if (storage.nextDouble() < 0.5) {
      // one more claim to be provisioned, so that the capacity check is reached often
      PersistentVolumeClaimBuilder b =
          new PersistentVolumeClaimBuilder()
              .withNewMetadata()
              .withNamespace(pod.getMetadata().getNamespace())
              .withName("cap")
              .endMetadata()
              .withNewSpec()
              .withAccessModes("ReadWriteOnce")
              .withStorageClassName("wffc")
              .endSpec();
      if (storage.nextDouble() < 0.15) {
        b.editMetadata()
            .addToAnnotations(
                "volume.kubernetes.io/selected-node",
                nodes.get(storage.nextInt(nodes.size())).getMetadata().getName())
            .endMetadata();
      }
      pvcs.add(b.build());
      addVolumes(pod, List.of(claimVolume("cap", "cap")));
    }
    List<PersistentVolumeClaim> requested = requests(storage, pvcs);
    List<CSIDriver> drivers = drivers(storage);
    List<CSIStorageCapacity> capacities = capacities(storage, nodes);
    List<PersistentVolume> pvs = new ArrayList<>(drawn.pvs());
    if (existing.nextDouble() < 0.6) {
      requested = picky(existing, requested);
      pvs.addAll(existingVolumes(existing, nodes, requested));
    }
    return new SchedulingVolumes(
        requested, pvs, drawn.storageClasses(), drawn.csiNodes(), drivers, capacities);
  }

  static final List<String> ACCESS_MODES =
      List.of("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod");

  /** Distinct sizes, so that no two volumes of a scenario tie for the smallest fit. */
  static final List<String> VOLUME_SIZES =
      List.of("500M", "1Gi", "1500M", "2Gi", "3Gi", "5Gi", "8Gi", "10Gi", "20Gi", "100Gi");

  /**
   * Two to six PersistentVolumes, mostly of the classes that wait for their first consumer (one
   * that provisions, one that does not), mostly {@code Available}: sizes around the claims'
   * requests (each different: upstream takes the first of equally small volumes in its informer's
   * order, which is not set), access and volume modes, labels for selectors, node affinity to zones
   * or nodes; some pre-bound to one of the claims (with or without its uid) or claimed by another,
   * some being deleted, a few of a VolumeAttributesClass.
   */
  private static List<PersistentVolume> existingVolumes(
      Random r, List<Node> nodes, List<PersistentVolumeClaim> pvcs) {
    List<String> sizes = new ArrayList<>(VOLUME_SIZES);
    java.util.Collections.shuffle(sizes, r);
    int count = 2 + r.nextInt(5);
    List<PersistentVolume> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      double cls = r.nextDouble();
      PersistentVolumeBuilder b =
          new PersistentVolumeBuilder()
              .withNewMetadata()
              .withName("static-" + i)
              .endMetadata()
              .withNewSpec()
              .withStorageClassName(cls < 0.55 ? "wffc-none" : cls < 0.9 ? "wffc" : "imm")
              .withAccessModes(accessModes(r))
              .endSpec();
      if (r.nextDouble() < 0.9) {
        b.editSpec().addToCapacity("storage", new Quantity(sizes.get(i))).endSpec();
      }
      double phase = r.nextDouble();
      b.withNewStatus()
          .withPhase(phase < 0.8 ? "Available" : phase < 0.9 ? "Released" : "Pending")
          .endStatus();
      if (r.nextDouble() < 0.1) {
        b.editSpec().withVolumeMode("Block").endSpec();
      } else if (r.nextDouble() < 0.3) {
        b.editSpec().withVolumeMode("Filesystem").endSpec();
      }
      if (r.nextDouble() < 0.3) {
        b.editMetadata().addToLabels("tier", r.nextBoolean() ? "fast" : "slow").endMetadata();
      }
      if (r.nextDouble() < 0.5) {
        b.editSpec().withNodeAffinity(volume(r, nodes, "x").getSpec().getNodeAffinity()).endSpec();
      }
      double ref = r.nextDouble();
      if (ref < 0.15 && !pvcs.isEmpty()) {
        PersistentVolumeClaim c = pvcs.get(r.nextInt(pvcs.size()));
        b.editSpec()
            .withNewClaimRef()
            .withNamespace(c.getMetadata().getNamespace())
            .withName(c.getMetadata().getName())
            .withUid(r.nextBoolean() ? null : r.nextBoolean() ? c.getMetadata().getUid() : "uid-x")
            .endClaimRef()
            .endSpec();
      } else if (ref < 0.25) {
        b.editSpec()
            .withNewClaimRef()
            .withNamespace("default")
            .withName("someone-else")
            .endClaimRef()
            .endSpec();
      }
      if (r.nextDouble() < 0.04) {
        b.editMetadata()
            .withDeletionTimestamp("2026-01-01T00:00:00Z")
            .addToFinalizers("kubernetes.io/pv-protection")
            .endMetadata();
      }
      if (r.nextDouble() < 0.04) {
        b.editSpec().withVolumeAttributesClassName("gold").endSpec();
      }
      out.add(b.build());
    }
    return out;
  }

  /**
   * The claims with a uid (a pre-bound volume may name it), and now and then a selector, a volume
   * mode, another access mode or a VolumeAttributesClass.
   */
  private static List<PersistentVolumeClaim> picky(Random r, List<PersistentVolumeClaim> pvcs) {
    List<PersistentVolumeClaim> out = new ArrayList<>();
    for (PersistentVolumeClaim c : pvcs) {
      PersistentVolumeClaimBuilder b =
          new PersistentVolumeClaimBuilder(c)
              .editMetadata()
              .withUid("uid-" + c.getMetadata().getName())
              .endMetadata();
      if (r.nextDouble() < 0.2) {
        b.editSpec().withNewSelector().addToMatchLabels("tier", "fast").endSelector().endSpec();
      }
      if (r.nextDouble() < 0.1) {
        b.editSpec().withVolumeMode(r.nextBoolean() ? "Block" : "Filesystem").endSpec();
      }
      if (r.nextDouble() < 0.2) {
        b.editSpec().withAccessModes(accessModes(r)).endSpec();
      }
      if (r.nextDouble() < 0.04) {
        b.editSpec().withVolumeAttributesClassName("gold").endSpec();
      }
      out.add(b.build());
    }
    return out;
  }

  /** Mostly ReadWriteOnce, which most claims ask for, so that volumes often fit. */
  private static List<String> accessModes(Random r) {
    List<String> modes = new ArrayList<>();
    for (String m : ACCESS_MODES) {
      if (r.nextDouble() < (m.equals("ReadWriteOnce") ? 0.85 : 0.3)) {
        modes.add(m);
      }
    }
    return modes.isEmpty() ? List.of("ReadWriteOnce") : modes;
  }

  private static SchedulingVolumes draw(Random r, List<Node> nodes, List<Pod> placed, Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    List<PersistentVolumeClaim> pvcs = new ArrayList<>();
    List<PersistentVolume> pvs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      String name = "c" + i;
      if (r.nextDouble() < 0.08) {
        continue; // missing
      }
      claim(r, nodes, ns, name, null, pvcs, pvs);
    }
    List<Volume> volumes = new ArrayList<>();
    int count = 1 + r.nextInt(2);
    for (int i = 0; i < count; i++) {
      volumes.add(claimVolume("v" + i, "c" + r.nextInt(4)));
    }
    if (r.nextDouble() < 0.2) {
      volumes.add(new VolumeBuilder().withName("eph").withNewEphemeral().endEphemeral().build());
      if (r.nextDouble() < 0.85) {
        String owner = r.nextDouble() < 0.85 ? pod.getMetadata().getUid() : "uid-someone-else";
        claim(r, nodes, ns, pod.getMetadata().getName() + "-eph", owner, pvcs, pvs);
      }
    }
    if (r.nextDouble() < 0.1) {
      volumes.add(gcePd(r));
    }
    addVolumes(pod, volumes);
    for (Pod p : placed) {
      if (r.nextDouble() < 0.3) {
        List<Volume> theirs = new ArrayList<>();
        theirs.add(claimVolume("v", "c" + r.nextInt(4)));
        if (r.nextDouble() < 0.2) {
          theirs.add(gcePd(r));
        }
        addVolumes(p, theirs);
      }
    }
    List<CSINode> csiNodes = new ArrayList<>();
    for (Node n : nodes) {
      if (r.nextDouble() < 0.5) {
        csiNodes.add(
            new CSINodeBuilder()
                .withNewMetadata()
                .withName(n.getMetadata().getName())
                .endMetadata()
                .withNewSpec()
                .addNewDriver()
                .withName(DRIVER)
                .withNodeID(n.getMetadata().getName())
                .withNewAllocatable()
                .withCount(r.nextInt(3))
                .endAllocatable()
                .endDriver()
                .endSpec()
                .build());
      }
    }
    return new SchedulingVolumes(pvcs, pvs, classes(r), csiNodes, List.of(), List.of());
  }

  /** Most claims request storage (a claim without a request has no capacity to check). */
  private static List<PersistentVolumeClaim> requests(Random r, List<PersistentVolumeClaim> pvcs) {
    List<PersistentVolumeClaim> out = new ArrayList<>();
    for (PersistentVolumeClaim c : pvcs) {
      if (r.nextDouble() < 0.8) {
        c =
            new PersistentVolumeClaimBuilder(c)
                .editSpec()
                .withNewResources()
                .addToRequests("storage", new Quantity(SIZES.get(r.nextInt(SIZES.size()))))
                .endResources()
                .endSpec()
                .build();
      }
      out.add(c);
    }
    return out;
  }

  /** The provisioner's CSIDriver, mostly publishing capacity; sometimes none, or not opted in. */
  private static List<CSIDriver> drivers(Random r) {
    if (r.nextDouble() < 0.2) {
      return List.of();
    }
    double opt = r.nextDouble();
    return List.of(
        new CSIDriverBuilder()
            .withNewMetadata()
            .withName(DRIVER)
            .endMetadata()
            .withNewSpec()
            .withStorageCapacity(opt < 0.7 ? Boolean.TRUE : opt < 0.85 ? Boolean.FALSE : null)
            .endSpec()
            .build());
  }

  /**
   * A few CSIStorageCapacities, mostly of the class that provisions: a zone's, a node's, zones by
   * expression, every node's (empty topology) or none's; by capacity or maximum volume size. One
   * with a maximum volume size always has a capacity too: upstream's VolumeBinding Score reads the
   * capacity of the object its Filter chose, and a nil one would crash it.
   */
  private static List<CSIStorageCapacity> capacities(Random r, List<Node> nodes) {
    List<CSIStorageCapacity> out = new ArrayList<>();
    int count = r.nextInt(5);
    for (int i = 0; i < count; i++) {
      CSIStorageCapacityBuilder b =
          new CSIStorageCapacityBuilder()
              .withNewMetadata()
              .withNamespace("kube-system")
              .withName("cap-" + i)
              .endMetadata()
              .withStorageClassName(
                  r.nextDouble() < 0.8 ? "wffc" : List.of("imm", "wffc-none").get(r.nextInt(2)));
      LabelSelector topology = topology(r, nodes);
      if (topology != null) {
        b.withNodeTopology(topology);
      }
      if (r.nextDouble() < 0.9) {
        b.withCapacity(new Quantity(CAPACITIES.get(r.nextInt(CAPACITIES.size()))));
        if (r.nextDouble() < 0.3) {
          b.withMaximumVolumeSize(new Quantity(CAPACITIES.get(r.nextInt(CAPACITIES.size()))));
        }
      }
      out.add(b.build());
    }
    return out;
  }

  private static LabelSelector topology(Random r, List<Node> nodes) {
    double kind = r.nextDouble();
    if (kind < 0.45) {
      return new LabelSelectorBuilder()
          .addToMatchLabels("topology.kubernetes.io/zone", ZONES.get(r.nextInt(ZONES.size())))
          .build();
    }
    if (kind < 0.65) {
      return new LabelSelectorBuilder()
          .addToMatchLabels(
              "kubernetes.io/hostname", nodes.get(r.nextInt(nodes.size())).getMetadata().getName())
          .build();
    }
    if (kind < 0.8) {
      List<String> zones = new ArrayList<>();
      for (String z : ZONES) {
        if (r.nextDouble() < 0.5) {
          zones.add(z);
        }
      }
      return new LabelSelectorBuilder()
          .addNewMatchExpression()
          .withKey("topology.kubernetes.io/zone")
          .withOperator("In")
          .withValues(zones.isEmpty() ? List.of("z9") : zones)
          .endMatchExpression()
          .build();
    }
    return kind < 0.9 ? new LabelSelector() : null;
  }

  private static void claim(
      Random r,
      List<Node> nodes,
      String ns,
      String name,
      String ownerUid,
      List<PersistentVolumeClaim> pvcs,
      List<PersistentVolume> pvs) {
    PersistentVolumeClaimBuilder b =
        new PersistentVolumeClaimBuilder()
            .withNewMetadata()
            .withNamespace(ns)
            .withName(name)
            .endMetadata()
            .withNewSpec()
            .withAccessModes(r.nextDouble() < 0.2 ? "ReadWriteOncePod" : "ReadWriteOnce")
            .endSpec();
    if (ownerUid != null) {
      b.editMetadata()
          .addNewOwnerReference()
          .withApiVersion("v1")
          .withKind("Pod")
          .withName("owner")
          .withUid(ownerUid)
          .withController(true)
          .endOwnerReference()
          .endMetadata();
    }
    if (r.nextDouble() < 0.55) {
      String pv = "pv-" + ns + "-" + name;
      b.editSpec().withVolumeName(pv).endSpec();
      if (r.nextDouble() < 0.9) {
        b.editMetadata().addToAnnotations("pv.kubernetes.io/bind-completed", "yes").endMetadata();
      }
      if (r.nextDouble() < 0.95) {
        pvs.add(volume(r, nodes, pv));
      } else if (r.nextDouble() < 0.5) {
        b.withNewStatus().withPhase("Lost").endStatus();
      }
    } else {
      b.editSpec().withStorageClassName(CLASSES.get(r.nextInt(CLASSES.size()))).endSpec();
      if (r.nextDouble() < 0.2) {
        b.editMetadata()
            .addToAnnotations(
                "volume.kubernetes.io/selected-node",
                nodes.get(r.nextInt(nodes.size())).getMetadata().getName())
            .endMetadata();
      }
    }
    if (r.nextDouble() < 0.04) {
      b.editMetadata()
          .withDeletionTimestamp("2026-01-01T00:00:00Z")
          .addToFinalizers("kubernetes.io/pvc-protection")
          .endMetadata();
    }
    pvcs.add(b.build());
  }

  private static PersistentVolume volume(Random r, List<Node> nodes, String name) {
    PersistentVolumeBuilder b =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName(name)
            .endMetadata()
            .withNewSpec()
            .endSpec();
    if (r.nextDouble() < 0.5) {
      List<String> values = new ArrayList<>();
      boolean byZone = r.nextBoolean();
      for (String v :
          byZone ? ZONES : nodes.stream().map(n -> n.getMetadata().getName()).toList()) {
        if (r.nextDouble() < 0.5) {
          values.add(v);
        }
      }
      if (values.isEmpty()) {
        values.add("elsewhere");
      }
      b.editSpec()
          .withNewNodeAffinity()
          .withNewRequired()
          .addNewNodeSelectorTerm()
          .withMatchExpressions(
              new NodeSelectorRequirementBuilder()
                  .withKey(byZone ? "topology.kubernetes.io/zone" : "kubernetes.io/hostname")
                  .withOperator("In")
                  .withValues(values)
                  .build())
          .endNodeSelectorTerm()
          .endRequired()
          .endNodeAffinity()
          .endSpec();
    }
    if (r.nextDouble() < 0.3) {
      List<String> zones = new ArrayList<>();
      for (String z : ZONES) {
        if (r.nextDouble() < 0.5) {
          zones.add(z);
        }
      }
      if (zones.isEmpty()) {
        zones.add("z9");
      }
      b.editMetadata()
          .addToLabels(ZONE_KEYS.get(r.nextInt(ZONE_KEYS.size())), String.join("__", zones))
          .endMetadata();
    }
    if (r.nextDouble() < 0.6) {
      b.editSpec().withNewCsi().withDriver(DRIVER).withVolumeHandle("h-" + name).endCsi().endSpec();
    }
    return b.build();
  }

  private static List<StorageClass> classes(Random r) {
    List<StorageClass> out = new ArrayList<>();
    out.add(storageClass("imm", DRIVER, "Immediate"));
    StorageClassBuilder wffc =
        new StorageClassBuilder(storageClass("wffc", DRIVER, "WaitForFirstConsumer"));
    if (r.nextDouble() < 0.5) {
      List<String> zones = new ArrayList<>();
      for (String z : ZONES) {
        if (r.nextDouble() < 0.6) {
          zones.add(z);
        }
      }
      wffc.addToAllowedTopologies(
          new TopologySelectorTermBuilder()
              .addNewMatchLabelExpression()
              .withKey("topology.kubernetes.io/zone")
              .withValues(zones.isEmpty() ? List.of("z9") : zones)
              .endMatchLabelExpression()
              .build());
    }
    out.add(wffc.build());
    out.add(storageClass("wffc-none", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"));
    return out;
  }

  private static StorageClass storageClass(String name, String provisioner, String mode) {
    return new StorageClassBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withProvisioner(provisioner)
        .withVolumeBindingMode(mode)
        .build();
  }

  private static Volume claimVolume(String name, String claim) {
    return new VolumeBuilder()
        .withName(name)
        .withNewPersistentVolumeClaim()
        .withClaimName(claim)
        .endPersistentVolumeClaim()
        .build();
  }

  private static Volume gcePd(Random r) {
    return new VolumeBuilder()
        .withName("pd")
        .withNewGcePersistentDisk()
        .withPdName(r.nextBoolean() ? "d1" : "d2")
        .withReadOnly(r.nextBoolean())
        .endGcePersistentDisk()
        .build();
  }

  private static void addVolumes(Pod p, List<Volume> volumes) {
    List<Volume> all =
        p.getSpec().getVolumes() == null
            ? new ArrayList<>()
            : new ArrayList<>(p.getSpec().getVolumes());
    all.addAll(volumes);
    p.getSpec().setVolumes(all);
  }
}
