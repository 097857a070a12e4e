package io.kdra.it;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * No two packages depend on each other, directly or around a loop: in every module's classes (the
 * service jars and kube-support are on this module's test class path) and in this module's test
 * harness; not in other modules' test fixtures. A cycle means two packages that can only be read,
 * changed and tested together.
 */
class PackageCyclesTest {

  private static final JavaClasses KDRA =
      new ClassFileImporter()
          .withImportOption(location -> !location.contains("-tests.jar"))
          .importLocations(kdraLocations());

  /**
   * kdra's own jars and class directories on the class path: from the local repository ({@code
   * io/kdra/...}) or the reactor ({@code target/}). Scanning every library jar for the package
   * costs minutes on a loaded machine.
   */
  private static List<Location> kdraLocations() {
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> e.contains("/io/kdra/") || e.contains("/target/"))
        .map(PackageCyclesTest::location)
        .toList();
  }

  private static Location location(String classPathEntry) {
    if (!classPathEntry.endsWith(".jar")) {
      return Location.of(Path.of(classPathEntry));
    }
    try (JarFile jar = new JarFile(classPathEntry)) {
      return Location.of(jar);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void everyModuleIsRead() {
    assertThat(
            List.of(
                "io.kdra.core.alloc",
                "io.kdra.leadership",
                "io.kdra.claimcontroller.scheduling",
                "io.kdra.slicepublisher.domain",
                "io.kdra.devicedriver.plugin",
                "io.kdra.computeclassbridge.reconciler",
                "io.kdra.it.controlplane"))
        .allMatch(KDRA::containPackage);
  }

  @Test
  void theModulesPackagesHaveNoCycles() {
    slices().matching("io.kdra.(**)").should().beFreeOfCycles().check(KDRA);
  }
}
