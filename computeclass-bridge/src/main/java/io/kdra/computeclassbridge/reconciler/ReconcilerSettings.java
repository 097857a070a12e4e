package io.kdra.computeclassbridge.reconciler;

import java.time.Duration;
import java.util.Optional;

/**
 * What the reconciler reads of the bridge's configuration, so that it does not depend on the
 * configuration package that wires it.
 *
 * @param catalogConfigMap the ConfigMap overlaying the shipped accelerator catalog, if any
 * @param catalogNamespace its namespace; the client's namespace when absent
 * @param catalogKey the ConfigMap's data key holding the overlay
 * @param standbyRetry how soon a leader whose informers have not listed yet looks again (as often
 *     as it campaigns); a replica that does not lead does not look again until it leads
 */
public record ReconcilerSettings(
    Optional<String> catalogConfigMap,
    Optional<String> catalogNamespace,
    String catalogKey,
    Duration standbyRetry) {}
