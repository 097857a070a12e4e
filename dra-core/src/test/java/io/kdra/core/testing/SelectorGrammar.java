package io.kdra.core.testing;

import static io.kdra.core.testing.ScenarioGenerator.FABRIC;
import static io.kdra.core.testing.ScenarioGenerator.GPU;
import static io.kdra.core.testing.ScenarioGenerator.MODELS;
import static io.kdra.core.testing.ScenarioGenerator.NIC;
import static io.kdra.core.testing.ScenarioGenerator.VERSIONS;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

/**
 * The DeviceClasses every scenario offers, and request selectors drawn from a grammar of realistic
 * CEL expressions over the generated attributes and capacities (some unguarded, so that evaluation
 * fails on devices that lack the attribute).
 */
final class SelectorGrammar {

  static final String IS_GPU = "device.driver == \"" + GPU + "\"";

  private final Random r;

  SelectorGrammar(Random basic) {
    this.r = basic;
  }

  /** The same classes in every scenario: claims pick among them. */
  static List<DeviceClass> classes() {
    return List.of(
        AllocFixtures.deviceClass("gpu", IS_GPU),
        AllocFixtures.deviceClass(
            "gpu-big", IS_GPU, cap("memory") + ".compareTo(quantity(\"40Gi\")) >= 0"),
        AllocFixtures.deviceClass(
            "gpu-a100", IS_GPU + " && " + attr(GPU, "model") + " == \"A100\""),
        AllocFixtures.deviceClass("gpu-healthy", IS_GPU + " && " + attr(GPU, "healthy")),
        // unguarded: devices without the optional mig attribute make evaluation fail
        AllocFixtures.deviceClass("gpu-mig", IS_GPU, attr(GPU, "mig") + " == true"),
        AllocFixtures.deviceClass("vgpu", IS_GPU + " && device.allowMultipleAllocations"),
        AllocFixtures.deviceClass(
            "partition", IS_GPU, "\"partition\" in device.attributes[\"" + GPU + "\"]"),
        AllocFixtures.deviceClass("nic", "device.driver == \"" + NIC + "\""),
        AllocFixtures.deviceClass("fabric", "device.driver == \"" + FABRIC + "\""));
  }

  /** One selector for a request of this class: an atom, or two joined, or one negated. */
  String selector(String className) {
    Supplier<String> atom =
        switch (className) {
          case "nic" -> this::nicAtom;
          case "fabric" -> this::fabricAtom;
          default -> this::gpuAtom;
        };
    int shape = r.nextInt(10);
    if (shape < 2) {
      return atom.get() + " || " + atom.get();
    }
    if (shape < 3) {
      return "!(" + atom.get() + ")";
    }
    if (shape < 4) {
      return atom.get() + " && " + atom.get();
    }
    return atom.get();
  }

  private static String attr(String domain, String id) {
    return "device.attributes[\"" + domain + "\"]." + id;
  }

  private static String cap(String id) {
    return "device.capacity[\"" + GPU + "\"]." + id;
  }

  private String gpuAtom() {
    String model = MODELS[r.nextInt(MODELS.length)];
    String version = VERSIONS[r.nextInt(3)];
    String mem = new String[] {"16Gi", "24Gi", "40Gi", "80Gi", "30000Mi"}[r.nextInt(5)];
    return switch (r.nextInt(16)) {
      case 0 -> attr(GPU, "model") + " == \"" + model + "\"";
      case 1 -> attr(GPU, "model") + " != \"" + model + "\"";
      case 2 ->
          attr(GPU, "model")
              + " in [\""
              + model
              + "\", \""
              + MODELS[r.nextInt(MODELS.length)]
              + "\"]";
      case 3 -> cap("memory") + ".compareTo(quantity(\"" + mem + "\")) >= 0";
      case 4 -> cap("memory") + ".isLessThan(quantity(\"" + mem + "\"))";
      case 5 -> attr(GPU, "numa") + " == " + r.nextInt(2);
      case 6 -> attr(GPU, "healthy");
      case 7 -> "!" + attr(GPU, "healthy");
      case 8 -> attr(GPU, "driverVersion") + ".isGreaterThan(semver(\"" + version + "\"))";
      case 9 -> attr(GPU, "driverVersion") + ".compareTo(semver(\"" + version + "\")) <= 0";
      case 10 -> "has(" + attr(GPU, "mig") + ") && " + attr(GPU, "mig");
      case 11 -> "!(\"mig\" in device.attributes[\"" + GPU + "\"])";
      case 12 ->
          r.nextBoolean()
              ? attr(GPU, "model") + ".startsWith(\"" + model.charAt(0) + "\")"
              : attr(GPU, "model") + ".matches(\"^[AH]100$\")";
      case 13 -> cap("cores") + ".isGreaterThan(quantity(\"" + (40 + 8 * r.nextInt(10)) + "\"))";
      case 14 ->
          "device.attributes[\"resource.kubernetes.io\"].pcieRoot == \"pci-" + r.nextInt(2) + "\"";
      default ->
          r.nextInt(4) == 0
              ? attr(GPU, "mig") // unguarded: may fail to evaluate
              : attr(GPU, "numa") + " * 2 + 1 >= " + (1 + 2 * r.nextInt(2));
    };
  }

  private String nicAtom() {
    return switch (r.nextInt(3)) {
      case 0 -> attr(NIC, "speed") + " >= " + new int[] {100, 200, 400}[r.nextInt(3)];
      case 1 -> attr(NIC, "rdma");
      default ->
          "device.attributes[\"resource.kubernetes.io\"].pcieRoot == \"pci-" + r.nextInt(2) + "\"";
    };
  }

  private String fabricAtom() {
    return r.nextBoolean()
        ? attr(FABRIC, "bandwidth") + " > " + (r.nextBoolean() ? 50 : 100)
        : attr(FABRIC, "generation") + ".isGreaterThan(semver(\"3.5.0\"))";
  }
}
