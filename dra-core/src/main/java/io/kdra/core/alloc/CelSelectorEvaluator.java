package io.kdra.core.alloc;

import com.google.common.base.Suppliers;
import io.kdra.core.cel.CelDevice;
import io.kdra.core.cel.CelSelectorException;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import java.util.function.Supplier;

/**
 * Evaluates selectors with the DRA CEL environment. Compiled programs are cached by the
 * environment; the per-device CEL view is built once per {@link CandidateDevice} and reused.
 * Thread-safe.
 */
public final class CelSelectorEvaluator implements SelectorEvaluator {

  private final Supplier<DeviceSelectorEnvironment> environment;

  public CelSelectorEvaluator(DeviceSelectorEnvironment environment) {
    this.environment = () -> environment;
  }

  private CelSelectorEvaluator(Supplier<DeviceSelectorEnvironment> environment) {
    this.environment = environment;
  }

  /**
   * An evaluator whose environment matches the features ({@code allowMultipleAllocations}). The
   * environment is built when the first selector is evaluated: building it is about a tenth of a
   * second of a {@code dra-alloc} run's CPU, and a run with nothing to allocate never needs it.
   */
  public static CelSelectorEvaluator forFeatures(AllocatorFeatures features) {
    return new CelSelectorEvaluator(
        Suppliers.memoize(() -> DeviceSelectorEnvironment.create(features.consumableCapacity())));
  }

  @Override
  public boolean matches(String expression, CandidateDevice device) {
    CelDevice view = view(expression, device);
    try {
      return environment.get().compile(expression).matches(view);
    } catch (CelSelectorException e) {
      throw new SelectorException(expression, e.getMessage(), e);
    }
  }

  @Override
  public Object derivedValue(String expression, CandidateDevice device) {
    CelDevice view = view(expression, device);
    try {
      return environment.get().compileDerived(expression).value(view);
    } catch (CelSelectorException e) {
      throw new SelectorException(expression, e.getMessage(), e);
    }
  }

  private static CelDevice view(String expression, CandidateDevice device) {
    CelDevice view = (CelDevice) device.selectorView();
    if (view == null) {
      try {
        view = CelDevice.of(device.driver(), device.device());
      } catch (IllegalArgumentException e) {
        throw new SelectorException(expression, e.getMessage(), e);
      }
      device.selectorView(view);
    }
    return view;
  }
}
