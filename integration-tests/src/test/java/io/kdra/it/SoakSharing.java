package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaimConfigurationBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.SoakGpus.MigPartition;
import io.kdra.it.nodes.SimulatedNode;
import io.kdra.it.services.Dra;
import io.kdra.it.services.Stack;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The chaos soak's shared GPUs ({@link ChaosSoakIT}): two nodes whose drivers share their whole
 * GPUs, {@value #TIME_SLICED_NODE} by time-slicing (an H100, and a MIG-enabled GPU in dynamic MIG
 * mode) and {@value #MPS_NODE} through MPS (an H100); pods whose claims take a time-slice (the
 * run's interval, drawn once, named or not), an MPS share (with client limits or without), a MIG
 * partition (1g, 2g or 3g), or a device with adminAccess (a whole GPU in use or not, or the MPS
 * GPU); and the invariants on them: the simulated GPUs hold what the drivers' checkpoints imply
 * ({@link SoakGpus#mismatches}), no two claims hold overlapping partitions.
 *
 * <p>Their DeviceClasses select these devices only, and the soak's other claims take only {@link
 * #WHOLE_CLASS} (whole GPUs that are neither shared nor MIG-enabled) and ComputeClasses of products
 * these nodes lack, so that the soak's other invariants keep their meaning. Fewer sharing pods can
 * exist ({@link #POD_NAMES}) than a GPU has shares: a shared GPU never runs out of them.
 */
final class SoakSharing {

  static final String TIME_SLICED_NODE = "node-t";
  static final String MPS_NODE = "node-m";
  static final int SHARES = 8;
  static final int POD_NAMES = 6;

  /** The soak's other claims: whole GPUs, neither shared nor MIG-enabled. */
  static final String WHOLE_CLASS = "soak-whole-gpu";

  static final String TIME_SLICED_CLASS = "soak-time-sliced";
  static final String MPS_CLASS = "soak-mps";
  static final List<String> MIG_PROFILES = List.of("1g.5gb", "2g.10gb", "3g.20gb");

  /** The label upstream requires on a namespace whose claims ask for adminAccess (KEP-5018). */
  static final String ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access";

  /** A product no ComputeClass of the soak names, for the MIG-enabled GPU. */
  private static final String MIG_PRODUCT = "NVIDIA A100-SXM4-80GB";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Stack stack;
  private final KubernetesClient client;
  private final Random random;

  /** The interval the run's time-sliced claims name: one, so that they never disagree. */
  private final String interval;

  /** Template name to what the summary calls its pods. */
  private final Map<String, String> templates = new LinkedHashMap<>();

  SoakSharing(Stack stack, Random random) {
    this.stack = stack;
    this.client = stack.client;
    this.random = random;
    this.interval = SoakGpus.INTERVALS.get(1 + random.nextInt(3));
  }

  /** An H100 shared by time-slicing ({@code gpu-1}) beside a MIG-enabled GPU ({@code gpu-0}). */
  static SimulatedNode timeSlicedNode() {
    return new SimulatedNode(
            TIME_SLICED_NODE,
            "devices:\n"
                + SimulatedNode.h100s(TIME_SLICED_NODE, 1, 1)
                + SimulatedNode.migGpu(TIME_SLICED_NODE, MIG_PRODUCT))
        .withDriverProperties(
            Map.of(
                "kdra.device-driver.sharing.strategy", "time-slicing",
                "kdra.device-driver.sharing.shares", Integer.toString(SHARES),
                "kdra.device-driver.mig-mode", "dynamic"));
  }

  /** An H100 shared through MPS ({@code gpu-0}). */
  static SimulatedNode mpsNode() {
    return new SimulatedNode(MPS_NODE, "devices:\n" + SimulatedNode.h100s(MPS_NODE, 0, 1))
        .withDriverProperties(
            Map.of(
                "kdra.device-driver.sharing.strategy",
                "mps",
                "kdra.device-driver.sharing.shares",
                Integer.toString(SHARES)));
  }

  /** Each sharing node's published devices: 14 partitions and two whole GPUs; one H100. */
  static final Map<String, Integer> DEVICES_OF = Map.of(TIME_SLICED_NODE, 16, MPS_NODE, 1);

  /**
   * The DeviceClasses and the templates of the sharing pods, and the namespace's adminAccess label;
   * before the webhook is registered (the templates' configs are valid).
   */
  void setUp() {
    String d = "device.attributes[\"" + Stack.DRIVER + "\"]";
    stack.createClusterScoped(
        Dra.gpuClass(WHOLE_CLASS, "!device.allowMultipleAllocations && !" + d + ".migEnabled"));
    stack.createClusterScoped(
        Dra.gpuClass(
            TIME_SLICED_CLASS,
            "device.allowMultipleAllocations && " + d + ".sharing == \"TimeSlicing\""));
    stack.createClusterScoped(
        Dra.gpuClass(MPS_CLASS, "device.allowMultipleAllocations && " + d + ".sharing == \"MPS\""));
    for (String profile : MIG_PROFILES) {
      stack.createClusterScoped(
          deviceClass(
              migClass(profile),
              "device.driver == \""
                  + Stack.DRIVER
                  + "\" && "
                  + d
                  + ".type == \"mig\" && "
                  + d
                  + ".profile == \""
                  + profile
                  + "\""));
    }
    client
        .namespaces()
        .withName(stack.namespace)
        .edit(
            n -> {
              if (n.getMetadata().getLabels() == null) {
                n.getMetadata().setLabels(new LinkedHashMap<>());
              }
              n.getMetadata().getLabels().put(ADMIN_ACCESS_LABEL, "true");
              return n;
            });
    template("ts", TIME_SLICED_CLASS, null, false, "time-sliced");
    template(
        "ts-interval",
        TIME_SLICED_CLASS,
        "{'strategy': 'TimeSlicing', 'timeSlicing': {'interval': '" + interval + "'}}",
        false,
        "time-sliced");
    template("mps", MPS_CLASS, null, false, "mps");
    template(
        "mps-limited",
        MPS_CLASS,
        "{'strategy': 'MPS', 'mps': {'activeThreadPercentage': 50}}",
        false,
        "mps");
    for (String profile : MIG_PROFILES) {
      template(migClass(profile), migClass(profile), null, false, "mig");
    }
    template("admin-whole", WHOLE_CLASS, null, true, "adminAccess");
    template("admin-mps", MPS_CLASS, null, true, "adminAccess");
    System.out.printf("[soak] time-sliced claims name the interval %s or none%n", interval);
  }

  /** The DeviceClass of the MIG partitions of {@code profile}. */
  static String migClass(String profile) {
    return "soak-mig-" + profile.replace(".", "");
  }

  /** A pod {@code s-N} from one of the sharing templates; returns the operation's name. */
  String createPod() {
    String name = "s-" + random.nextInt(POD_NAMES);
    if (client.pods().inNamespace(stack.namespace).withName(name).get() != null) {
      return "create-sharing-pod(exists)";
    }
    List<String> names = new ArrayList<>(templates.keySet());
    String template = names.get(random.nextInt(names.size()));
    client.resource(Dra.podWithTemplate(stack.namespace, name, template)).create();
    return "create-sharing-pod " + templates.get(template);
  }

  /** Whether the claims of {@code className} are the sharing pods'. */
  static boolean sharingClass(String className) {
    return className.equals(TIME_SLICED_CLASS)
        || className.equals(MPS_CLASS)
        || MIG_PROFILES.stream().anyMatch(p -> migClass(p).equals(className));
  }

  /**
   * Whether a claim with this one request, not allocated, fits what is free now: a share of a
   * published shared GPU (they never run out), a published placement of its MIG profile that no
   * allocated partition overlaps, or (adminAccess, which takes devices in use too) any published
   * device of its class; {@code published} is every untainted device as {@code pool/device}, {@code
   * wholeGpus} those of {@link #WHOLE_CLASS}.
   */
  static boolean fits(
      ExactDeviceRequest request,
      Set<String> published,
      Set<String> wholeGpus,
      List<MigPartition> allocatedPartitions) {
    String className = request.getDeviceClassName();
    if (className.equals(WHOLE_CLASS)) {
      // only adminAccess requests come here: the others are judged by the free whole GPUs
      return !wholeGpus.isEmpty();
    }
    if (className.equals(TIME_SLICED_CLASS)) {
      return published.contains(TIME_SLICED_NODE + "/gpu-1");
    }
    if (className.equals(MPS_CLASS)) {
      return published.contains(MPS_NODE + "/gpu-0");
    }
    String prefix = TIME_SLICED_NODE + "/";
    Set<String> devices =
        Set.copyOf(
            published.stream()
                .filter(p -> p.startsWith(prefix))
                .map(p -> p.substring(prefix.length()))
                .toList());
    for (String profile : MIG_PROFILES) {
      if (migClass(profile).equals(className)) {
        return !SoakGpus.freePlacements(0, profile, devices, allocatedPartitions).isEmpty();
      }
    }
    throw new IllegalArgumentException("not a class of the soak's sharing pods: " + className);
  }

  /** The MIG partitions that claims hold other than by adminAccess (they consume its slices). */
  static List<MigPartition> allocatedPartitions(List<ResourceClaim> claims) {
    List<MigPartition> out = new ArrayList<>();
    for (ResourceClaim c : claims) {
      for (DeviceRequestAllocationResult r : results(c)) {
        if (TIME_SLICED_NODE.equals(r.getPool()) && !Boolean.TRUE.equals(r.getAdminAccess())) {
          MigPartition.parse(r.getDevice()).ifPresent(out::add);
        }
      }
    }
    return out;
  }

  /** The claim's allocation results; none when it is not allocated. */
  static List<DeviceRequestAllocationResult> results(ResourceClaim claim) {
    if (claim == null || claim.getStatus() == null || claim.getStatus().getAllocation() == null) {
      return List.of();
    }
    return claim.getStatus().getAllocation().getDevices().getResults();
  }

  /** No two claims hold partitions of the MIG-enabled GPU that share a memory slice. */
  static void assertNoOverlappingPartitions(List<ResourceClaim> claims) {
    assertThat(SoakGpus.overlapping(allocatedPartitions(claims)))
        .as("MIG partitions allocated with a memory slice in common")
        .isEmpty();
  }

  /**
   * Issue 39's invariant: on each sharing node, the simulated GPUs hold what the claims in its
   * driver's checkpoint imply ({@link SoakGpus#mismatches}).
   */
  void assertGpusMatchCheckpoints() {
    for (String node : List.of(TIME_SLICED_NODE, MPS_NODE)) {
      SoakGpus.Node gpus =
          node.equals(MPS_NODE)
              ? new SoakGpus.Node(
                  SoakGpus.Strategy.MPS,
                  Map.of("gpu-0", SimulatedNode.uuid(node, 0)),
                  Map.of("gpu-0", pipe(node, "gpu-0")))
              : new SoakGpus.Node(
                  SoakGpus.Strategy.TIME_SLICING,
                  Map.of("gpu-1", SimulatedNode.uuid(node, 1)),
                  Map.of("gpu-1", pipe(node, "gpu-1")));
      List<SoakGpus.Use> uses = SoakGpus.uses(checkpoint(stack.nodes.checkpointFile(node)), node);
      SoakGpus.State state = SoakGpus.State.read(stack.nodes.simulatedGpuStateFile(node));
      assertThat(SoakGpus.mismatches(gpus, uses, state))
          .as("%s's simulated GPUs (%s) against its checkpoint's claims %s", node, state, uses)
          .isEmpty();
    }
  }

  /** The MPS pipe directory of a GPU, as the driver makes it under its mps-root. */
  private String pipe(String node, String device) {
    return stack.nodes.mpsRoot(node).resolve(device).resolve("pipe").toString();
  }

  private static JsonNode checkpoint(Path file) {
    try {
      return JSON.readTree(Files.readString(file));
    } catch (NoSuchFileException e) {
      return JSON.createObjectNode();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void template(
      String name, String className, String sharing, boolean adminAccess, String kind) {
    ResourceClaimTemplate t = Dra.template(stack.namespace, name, className, 1);
    var devices = t.getSpec().getSpec().getDevices();
    if (adminAccess) {
      devices.getRequests().get(0).getExactly().setAdminAccess(true);
    }
    if (sharing != null) {
      Map<String, Object> parameters = new LinkedHashMap<>();
      parameters.put("apiVersion", io.kdra.core.config.OpaqueConfigDecoder.API_VERSION);
      parameters.put("kind", io.kdra.core.config.OpaqueConfigDecoder.KIND);
      try {
        parameters.put("sharing", JSON.readValue(sharing.replace('\'', '"'), Map.class));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      devices.setConfig(
          List.of(
              new DeviceClaimConfigurationBuilder()
                  .withNewOpaque()
                  .withDriver(Stack.DRIVER)
                  .withParameters(parameters)
                  .endOpaque()
                  .build()));
    }
    client.resource(t).create();
    templates.put(name, kind);
  }

  private static DeviceClass deviceClass(String name, String cel) {
    return new DeviceClassBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .addNewSelector()
        .withNewCel()
        .withExpression(cel)
        .endCel()
        .endSelector()
        .endSpec()
        .build();
  }
}
