package io.kdra.it;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/**
 * No two packages depend on each other, directly or around a loop: in every module's classes (the
 * service jars and kube-support are on this module's test class path) and in this module's test
 * harness; not in other modules' test fixtures. A cycle means two packages that can only be read,
 * changed and tested together.
 */
class PackageCyclesTest {

  /** Test jars of other modules (their fixtures) are not part of the structure. */
  private static final JavaClasses KDRA =
      new ClassFileImporter()
          .withImportOption(location -> !location.contains("-tests.jar"))
          .importPackages("io.kdra");

  @Test
  void theModulesPackagesHaveNoCycles() {
    slices().matching("io.kdra.(**)").should().beFreeOfCycles().allowEmptyShould(false).check(KDRA);
  }
}
