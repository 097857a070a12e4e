package io.kdra.core.model;

import java.util.Objects;

/**
 * An attribute or capacity name: {@code domain/id}, or a bare {@code id} that belongs to the
 * driver's own domain ({@code model} of driver {@code gpu.example.com} is {@code
 * gpu.example.com/model}). Parsing does not validate; see {@code io.kdra.core.validation}.
 *
 * @param domain the domain, never null: the driver's name where the key had none
 * @param id the identifier after the slash
 */
public record QualifiedName(String domain, String id) {

  public QualifiedName {
    Objects.requireNonNull(domain, "domain");
    Objects.requireNonNull(id, "id");
  }

  /** Splits a key as stored in a slice; a key without a domain gets {@code driver} as domain. */
  public static QualifiedName of(String key, String driver) {
    int slash = key.indexOf('/');
    return slash < 0
        ? new QualifiedName(driver, key)
        : new QualifiedName(key.substring(0, slash), key.substring(slash + 1));
  }

  /** Splits a fully qualified name (as constraints use them); empty domain when there is none. */
  public static QualifiedName parseFullyQualified(String key) {
    return of(key, "");
  }

  @Override
  public String toString() {
    return domain.isEmpty() ? id : domain + "/" + id;
  }
}
