/**
 * Our drivers' opaque device configuration ({@code resource.kdra.io/v1alpha1 GpuConfig}): its one
 * strict decoder, used by the device-driver at prepare and by the slice-publisher's admission
 * webhook when a claim, template or class is written, so that both refuse the same configs.
 */
package io.kdra.core.config;
