package io.kdra.claimcontroller.domain;

/**
 * One volume plugin's PreFilter answer: a refusal of every node, or the state its Filter reads. The
 * plugins return it rather than failing so that {@link VolumeFilters} can stop at the first
 * refusal, as upstream's framework does.
 *
 * @param refusal the reason, in upstream's words, or the field this scheduler cannot honour
 * @param unsupported whether the refusal is ours (a volume this scheduler cannot model; no plugin
 *     refuses so since existing volumes are bound)
 * @param state the plugin's state for its Filter; null when refused
 */
record PreFilterStatus<T>(String refusal, boolean unsupported, T state) {

  static <T> PreFilterStatus<T> passed(T state) {
    return new PreFilterStatus<>(null, false, state);
  }

  static <T> PreFilterStatus<T> refused(String why) {
    return new PreFilterStatus<>(why, false, null);
  }

  static <T> PreFilterStatus<T> unsupported(String why) {
    return new PreFilterStatus<>(why, true, null);
  }
}
