package io.kdra.it.services;

import io.kdra.it.support.PausableProxy;

/**
 * The slice-publishers' admission webhook (HTTPS, the chart's {@code webhookPort}) as the API
 * server reaches it: {@code link} in front of every replica's port, as the chart's Service, which a
 * test may pause or cut (the webhook down); {@code certificate} the PEM certificate they serve (for
 * 127.0.0.1, self-signed: the webhook configuration's {@code caBundle}).
 */
public record PublisherWebhook(PausableProxy link, byte[] certificate) {

  /** The URL of the webhook's {@code path}, through the link. */
  public String url(String path) {
    return "https://" + link.address() + path;
  }
}
