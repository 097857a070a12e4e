package io.kdra.core.taint;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * Kubernetes 1.37's cluster-scoped {@code resource.k8s.io/v1} DeviceTaintRule: one taint for every
 * device its selector matches. fabric8 7.5 models only the alpha ({@code v1alpha3}, without
 * status), so the project carries this copy; {@code DeviceTaintRuleModelTest} fails once fabric8
 * ships {@code resource.v1.DeviceTaintRule}, and this copy should then give way to it. The
 * annotations let fabric8's typed client ({@code client.resources(DeviceTaintRule.class)}) and
 * informers serve it like a built-in kind.
 */
@Group("resource.k8s.io")
@Version("v1")
@Kind("DeviceTaintRule")
@Plural("devicetaintrules")
@Singular("devicetaintrule")
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonDeserialize(using = JsonDeserializer.None.class) // not fabric8's by-kind dispatch
public class DeviceTaintRule implements HasMetadata {

  private String apiVersion = "resource.k8s.io/v1";
  private String kind = "DeviceTaintRule";
  private ObjectMeta metadata;
  private DeviceTaintRuleSpec spec;
  private DeviceTaintRuleStatus status;

  public DeviceTaintRule() {}

  public DeviceTaintRule(ObjectMeta metadata, DeviceTaintRuleSpec spec) {
    this.metadata = metadata;
    this.spec = spec;
  }

  @Override
  public String getApiVersion() {
    return apiVersion;
  }

  @Override
  public void setApiVersion(String apiVersion) {
    this.apiVersion = apiVersion;
  }

  @Override
  public String getKind() {
    return kind;
  }

  public void setKind(String kind) {
    this.kind = kind;
  }

  @Override
  public ObjectMeta getMetadata() {
    return metadata;
  }

  @Override
  public void setMetadata(ObjectMeta metadata) {
    this.metadata = metadata;
  }

  public DeviceTaintRuleSpec getSpec() {
    return spec;
  }

  public void setSpec(DeviceTaintRuleSpec spec) {
    this.spec = spec;
  }

  public DeviceTaintRuleStatus getStatus() {
    return status;
  }

  public void setStatus(DeviceTaintRuleStatus status) {
    this.status = status;
  }

  /** The rule's name (rules are cluster-scoped). */
  public String name() {
    return metadata == null ? null : metadata.getName();
  }
}
