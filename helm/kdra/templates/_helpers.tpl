{{/* Chart name, shortened to fit label values. */}}
{{- define "kdra.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Prefix of every object name: <release>-<chart>, or the release alone when it contains the chart name. */}}
{{- define "kdra.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Name of a component's objects. Call with (dict "root" $ "component" "slice-publisher"). */}}
{{- define "kdra.componentName" -}}
{{- printf "%s-%s" (include "kdra.fullname" .root | trunc 40 | trimSuffix "-") .component -}}
{{- end -}}

{{/* The recommended labels of every object; with a component, its component label too. */}}
{{- define "kdra.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kdra.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: kdra
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{/* Labels that select a component's pods; never change them between releases. */}}
{{- define "kdra.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kdra.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end -}}

{{/* A component's ServiceAccount name. Call with (dict "root" $ "component" "..." "values" .Values.x). */}}
{{- define "kdra.serviceAccountName" -}}
{{- if .values.serviceAccount.create -}}
{{- default (include "kdra.componentName" .) .values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* A component's image reference: registry/repository, then @digest or :tag (appVersion by default). */}}
{{- define "kdra.image" -}}
{{- $repo := .values.image.repository -}}
{{- with .root.Values.imageRegistry -}}
{{- $repo = printf "%s/%s" (trimSuffix "/" .) $repo -}}
{{- end -}}
{{- if .values.image.digest -}}
{{- printf "%s@%s" $repo .values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (default .root.Chart.AppVersion .values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The device-driver's DRA driver name: the tpu name for the tpu backend, the gpu name otherwise. */}}
{{/*
The host directory of the device-driver's MPS pipe and log directories ("" unless the sharing
strategy is mps): deviceDriver.config.sharing.mps-root, by default the driver's own default. The
chart mounts it at the same path, because the CDI specs bind its subdirectories into the claims'
containers by host path. Call with $.
*/}}
{{- define "kdra.mpsRoot" -}}
{{- $sharing := .Values.deviceDriver.config.sharing | default dict -}}
{{- if eq (toString (index $sharing "strategy")) "mps" -}}
{{- default "/run/kdra/mps" (index $sharing "mps-root") -}}
{{- end -}}
{{- end -}}

{{- define "kdra.driverName" -}}
{{- if eq .Values.deviceDriver.backend "tpu" -}}
{{- .Values.driverNames.tpu -}}
{{- else -}}
{{- .Values.driverNames.gpu -}}
{{- end -}}
{{- end -}}

{{/*
The device-driver's namespace: deviceDriver.namespace, by default the release's. The controllers
stay in the release's; whatever names the driver's ServiceAccount, or lets its pods in, asks
here. Call with $.
*/}}
{{- define "kdra.driverNamespace" -}}
{{- default .Release.Namespace .Values.deviceDriver.namespace -}}
{{- end -}}

{{/*
The ConfigMap the chart writes into the driver's namespace with the publisher's CA ("" where the
driver needs none of the chart's: it mounts the TLS Secret in the release's namespace, or the
ConfigMap deviceDriver.publisherCA names). A Secret volume reads only the pod's own namespace,
and the CA is public: a ConfigMap needs no RBAC and no copy of the key. Call with $.
*/}}
{{- define "kdra.publisherCAConfigMap" -}}
{{- $p := .Values.slicePublisher -}}
{{- if and .Values.deviceDriver.enabled $p.enabled $p.tls.enabled (eq $p.tls.source "helm") (not .Values.deviceDriver.publisherCA.configMap) (not .Values.deviceDriver.publisherCA.secret) (ne (include "kdra.driverNamespace" .) .Release.Namespace) -}}
{{- printf "%s-publisher-ca" (include "kdra.componentName" (dict "root" . "component" "device-driver")) -}}
{{- end -}}
{{- end -}}

{{/*
Whether the device-driver dials a slice-publisher ("true" or empty): this release's, or, in a
driver-only release, the one deviceDriver.config.publisher.address names. Call with $.
*/}}
{{- define "kdra.driverDialsPublisher" -}}
{{- if or .Values.slicePublisher.enabled (and .Values.deviceDriver.config.publisher .Values.deviceDriver.config.publisher.address) }}true{{ end -}}
{{- end -}}

{{/* Whether the driver dials its publisher over TLS ("true" or empty). Call with $. */}}
{{- define "kdra.driverPublisherTls" -}}
{{- if and (include "kdra.driverDialsPublisher" .) .Values.slicePublisher.tls.enabled }}true{{ end -}}
{{- end -}}

{{/* Namespace of a component's Lease. Call with (dict "root" $ "values" .Values.x). */}}
{{- define "kdra.leaseNamespace" -}}
{{- default .root.Release.Namespace (index .values.config "leader-election" "lease-namespace") -}}
{{- end -}}

{{/*
Flattens a config tree into Java properties lines: (dict "prefix" "kdra.slice-publisher" "value" $tree).
Keys holding a dot or a slash (labels, e.g. network-pools.<pool>.node-selector) are quoted as
SmallRye Config expects; lists become comma-separated values; null and empty maps are left out.
*/}}
{{- define "kdra.flatten" -}}
{{- $prefix := .prefix -}}
{{- range $k, $v := .value }}
{{- $seg := $k -}}
{{- if or (contains "." $k) (contains "/" $k) }}{{ $seg = printf "%q" $k }}{{ end -}}
{{- $key := printf "%s.%s" $prefix $seg -}}
{{- if kindIs "map" $v }}
{{- include "kdra.flatten" (dict "prefix" $key "value" $v) }}
{{- else if kindIs "slice" $v }}
{{- if $v }}
{{ $key | replace ":" "\\:" | replace "=" "\\=" }}={{ join "," $v }}
{{- end }}
{{- else if not (kindIs "invalid" $v) }}
{{ $key | replace ":" "\\:" | replace "=" "\\=" }}={{ $v }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Quarkus properties every component gets from the global values: log level and, where the
service has tracing (otel=true), the OpenTelemetry exporter. Call with
(dict "root" $ "values" .Values.x "otel" true).
*/}}
{{- define "kdra.commonProperties" -}}
{{- $level := default .root.Values.logLevel .values.logLevel }}
quarkus.log.level={{ $level }}
quarkus.http.port={{ .values.httpPort }}
{{- with .values.grpcPort }}
quarkus.grpc.server.port={{ . }}
{{- end }}
{{- range $k, $v := .quarkus }}
{{ $k }}={{ $v }}
{{- end }}
quarkus.log.category."io.kdra".level={{ $level }}
{{- if .otel }}
{{- with .root.Values.opentelemetry }}
{{- if .enabled }}
quarkus.otel.sdk.disabled=false
quarkus.otel.exporter.otlp.endpoint={{ .endpoint }}
quarkus.otel.exporter.otlp.protocol={{ .protocol }}
{{- if .headers }}
quarkus.otel.exporter.otlp.headers={{ $h := list }}{{ range $k, $v := .headers }}{{ $h = append $h (printf "%s=%s" $k $v) }}{{ end }}{{ join "," $h }}
{{- end }}
{{- if .resourceAttributes }}
quarkus.otel.resource.attributes={{ $a := list }}{{ range $k, $v := .resourceAttributes }}{{ $a = append $a (printf "%s=%s" $k $v) }}{{ end }}{{ join "," $a }}
{{- end }}
{{- else }}
quarkus.otel.sdk.disabled=true
{{- end }}
{{- end }}
{{- end }}
{{- range $k, $v := .values.extraProperties }}
{{ $k }}={{ $v }}
{{- end }}
{{- end -}}

{{/* Pod-level settings shared by all components. Call with (dict "root" $ "values" .Values.x "component" "..."). */}}
{{- define "kdra.podCommon" -}}
serviceAccountName: {{ include "kdra.serviceAccountName" . }}
{{- if .root.Values.hostNetwork }}
hostNetwork: true
dnsPolicy: ClusterFirstWithHostNet
{{- end }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- $affinity := .values.affinity | default dict | deepCopy }}
{{- $spread := .values.topologySpreadConstraints }}
{{- if .values.spreadAcrossNodes }}
{{- /* a Deployment's replicas on different nodes where possible: preferences only, so that a
one-node cluster still runs them all; pod-template-hash counts each rollout's pods apart */ -}}
{{- $selector := include "kdra.selectorLabels" . | fromYaml }}
{{- if not $affinity.podAntiAffinity }}
{{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" $selector) }}
{{- $_ := set $affinity "podAntiAffinity" (dict "preferredDuringSchedulingIgnoredDuringExecution" (list (dict "weight" 100 "podAffinityTerm" $term))) }}
{{- end }}
{{- if not $spread }}
{{- $spread = list (dict "maxSkew" 1 "topologyKey" "kubernetes.io/hostname" "whenUnsatisfiable" "ScheduleAnyway" "labelSelector" (dict "matchLabels" $selector) "matchLabelKeys" (list "pod-template-hash")) }}
{{- end }}
{{- end }}
{{- with $affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $spread }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
The HTTP port (and the context's extra "ports", if any), probes and the environment every
container has. Call like kdra.podCommon.
*/}}
{{- define "kdra.containerCommon" -}}
image: {{ include "kdra.image" . }}
imagePullPolicy: {{ .values.image.pullPolicy }}
ports:
  - name: http
    containerPort: {{ .values.httpPort }}
    protocol: TCP
{{- with .ports }}
  {{- toYaml . | nindent 2 }}
{{- end }}
livenessProbe:
  httpGet:
    path: /q/health/live
    port: http
  initialDelaySeconds: 5
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /q/health/ready
    port: http
  initialDelaySeconds: 5
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 3
startupProbe:
  httpGet:
    path: /q/health/live
    port: http
  periodSeconds: 2
  failureThreshold: 60
{{- with .values.resources }}
resources:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.securityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Environment from the downward API, then the component's extraEnv. */}}
{{- define "kdra.env" -}}
env:
  - name: POD_NAMESPACE
    valueFrom:
      fieldRef:
        fieldPath: metadata.namespace
  - name: NODE_NAME
    valueFrom:
      fieldRef:
        fieldPath: spec.nodeName
  {{- with .root.Values.apiServer }}
  {{- if .host }}
  # in place of the kubernetes Service's address, which the kubelet announces
  - name: KUBERNETES_SERVICE_HOST
    value: {{ .host | quote }}
  - name: KUBERNETES_SERVICE_PORT
    value: {{ .port | quote }}
  {{- end }}
  {{- end }}
  {{- with .values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* Checksum of a component's ConfigMap, so that pods restart when their configuration changes. */}}
{{- define "kdra.configChecksum" -}}
{{- include (print .root.Template.BasePath "/" .component "/configmap.yaml") .root | sha256sum -}}
{{- end -}}

{{/*
Lays the chart's derived values (src) under a component's config (dst, a copy): a key the user
set, false and 0 included, wins; a missing or null one takes the derived value. (Sprig's merge
functions treat false as empty and would put the derived value back.)
*/}}
{{- define "kdra.fillDefaults" -}}
{{- $dst := .dst -}}
{{- range $k, $v := .src -}}
{{- $cur := index $dst $k -}}
{{- if and (kindIs "map" $v) (kindIs "map" $cur) -}}
{{- include "kdra.fillDefaults" (dict "dst" $cur "src" $v) -}}
{{- else if kindIs "invalid" $cur -}}
{{- $_ := set $dst $k $v -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The Deployment of a cluster-level component (slice-publisher, claim-controller,
computeclass-bridge). Call with (dict "root" $ "values" .Values.x "component" "..."), and
optionally "ports", "volumes", "mounts" (lists) and "annotations" (a map) of the component's own.
*/}}
{{- define "kdra.deployment" -}}
{{- $v := .values -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "kdra.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "kdra.labels" . | nindent 4 }}
spec:
  replicas: {{ $v.replicas }}
  {{- with $v.strategy }}
  strategy:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "kdra.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "kdra.labels" . | nindent 8 }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include "kdra.configChecksum" . }}
        {{- with .annotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- include "kdra.podCommon" . | nindent 6 }}
      containers:
        - name: {{ .component }}
          {{- include "kdra.containerCommon" . | nindent 10 }}
          {{- include "kdra.env" . | nindent 10 }}
          volumeMounts:
            - name: config
              mountPath: /deployments/config
              readOnly: true
            - name: tmp
              mountPath: /tmp
            {{- with .mounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: config
          configMap:
            name: {{ include "kdra.componentName" . }}
        - name: tmp
          emptyDir: {}
        {{- with .volumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
{{- end -}}

{{/* A Deployment's PodDisruptionBudget. Call like kdra.deployment. */}}
{{- define "kdra.pdb" -}}
{{- if .values.podDisruptionBudget.enabled }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "kdra.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "kdra.labels" . | nindent 4 }}
spec:
  maxUnavailable: {{ .values.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "kdra.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end -}}

{{/*
A component's ConfigMap around its properties. Call with the ctx plus "prefix" and "config", and
optionally "namespace" (the release's by default).
*/}}
{{- define "kdra.configMap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "kdra.componentName" . }}
  namespace: {{ default .root.Release.Namespace .namespace }}
  labels:
    {{- include "kdra.labels" . | nindent 4 }}
data:
  application.properties: |
    {{- include "kdra.flatten" (dict "prefix" .prefix "value" .config) | trim | nindent 4 }}
    {{- include "kdra.commonProperties" . | trim | nindent 4 }}
{{- end -}}

{{/*
A Role and RoleBinding for a component's leader-election Lease, in the Lease's namespace. Call
like kdra.deployment.
*/}}
{{- define "kdra.leaseRole" -}}
{{- $le := index .values.config "leader-election" -}}
{{- $ns := include "kdra.leaseNamespace" . -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "kdra.componentName" . }}-leader-election
  namespace: {{ $ns }}
  labels:
    {{- include "kdra.labels" . | nindent 4 }}
rules:
  # Leader election: read and renew the one Lease; create it the first time. create cannot be
  # limited by name (the name is not known before the object exists), get and patch are.
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    verbs: ["create"]
  # Unusual: both patch and update. fabric8's LeaderElector renews with a JSON merge patch that
  # carries the resourceVersion read; the leader releases the Lease on shutdown with an
  # optimistic update (so a standby takes over at once). list and watch of this one Lease (a
  # watch by name) let a replica check its Lease before it writes (LeaseFence).
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    resourceNames: [{{ index $le "lease-name" | quote }}]
    verbs: ["get", "list", "watch", "patch", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "kdra.componentName" . }}-leader-election
  namespace: {{ $ns }}
  labels:
    {{- include "kdra.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "kdra.componentName" . }}-leader-election
subjects:
  - kind: ServiceAccount
    name: {{ include "kdra.serviceAccountName" . }}
    namespace: {{ .root.Release.Namespace }}
{{- end -}}

{{/* The Secret with the slice-publisher's inventory TLS certificate (and its CA). Call with $. */}}
{{- define "kdra.publisherTlsSecret" -}}
{{- printf "%s-tls" (include "kdra.componentName" (dict "root" . "component" "slice-publisher")) -}}
{{- end -}}

{{/* The DNS name the publisher's certificate carries and the drivers verify. Call with $. */}}
{{- define "kdra.publisherServiceName" -}}
{{- printf "%s.%s.svc" (include "kdra.componentName" (dict "root" . "component" "slice-publisher")) .Release.Namespace -}}
{{- end -}}

{{/*
The publisher's TLS Secret as the cluster holds it, as JSON of its data (base64 values); {} on an
install, in lint and in template (which ask no cluster). The chart's only lookup of it: the chart
tests render an upgrade by defining this template anew. Call with $.
*/}}
{{- define "kdra.existingPublisherTls" -}}
{{- $existing := dict }}
{{- if .Release.IsUpgrade }}
{{- $existing = lookup "v1" "Secret" .Release.Namespace (include "kdra.publisherTlsSecret" .) }}
{{- end }}
{{- (get (default dict $existing) "data") | default dict | toJson -}}
{{- end -}}

{{/*
A new CA and a certificate it signed for the publisher's Service, as JSON of base64 ca.crt, tls.crt
and tls.key. The CA's name carries the moment it was made and a few random letters, so that a
driver's refusal during a rotation shows which CA is which. Its key is not kept: nothing else is ever signed with it. Call
with $.
*/}}
{{- define "kdra.newPublisherTls" -}}
{{- $v := .Values.slicePublisher }}
{{- $service := include "kdra.componentName" (dict "root" . "component" "slice-publisher") }}
{{- $dns := include "kdra.publisherDnsNames" . | fromJsonArray }}
{{- $ca := genCA (printf "%s-ca-%s-%s" $service (dateInZone "20060102-150405" now "UTC") (randAlphaNum 4 | lower)) (int $v.tls.validityDays) }}
{{- $cert := genSignedCert (first $dns) nil $dns (int $v.tls.validityDays) $ca }}
{{- dict "ca.crt" ($ca.Cert | b64enc) "tls.crt" ($cert.Cert | b64enc) "tls.key" ($cert.Key | b64enc) | toJson -}}
{{- end -}}

{{/*
The publisher's TLS material with source=helm, as JSON of the Secret's data (base64): ca.crt, the
bundle the drivers and the API server trust; tls.crt and tls.key, what the publisher serves; and
while a rotation (tls.caRotation) is under way, new-ca.crt, the new CA, and until serveNew,
new-tls.crt and new-tls.key, its certificate waiting, and new-ca-since, when trustNew ran. On an
upgrade the Secret's own, moved one step on by caRotation; on an install (or the Secret deleted)
a new CA and certificate. Both the Secret and the webhook's caBundle need the same bundle, and
genCA draws a new CA at every call, so the first call keeps its answer in the values of this
render (shared by every template of the chart) and later calls return it. Call with $.
*/}}
{{- define "kdra.publisherTlsData" -}}
{{- if not (hasKey .Values "kdraPublisherTlsOfThisRender") }}
{{- $existing := include "kdra.existingPublisherTls" . | fromJson }}
{{- $data := dict }}
{{- if and (hasKey $existing "ca.crt") (hasKey $existing "tls.crt") (hasKey $existing "tls.key") }}
{{- $data = pick $existing "ca.crt" "tls.crt" "tls.key" "new-ca.crt" "new-tls.crt" "new-tls.key" "new-ca-since" }}
{{- $data = include "kdra.rotatePublisherCA" (dict "root" . "data" $data) | fromJson }}
{{- else }}
{{- $data = include "kdra.newPublisherTls" . | fromJson }}
{{- end }}
{{- $_ := set .Values "kdraPublisherTlsOfThisRender" $data }}
{{- end }}
{{- index .Values "kdraPublisherTlsOfThisRender" | toJson -}}
{{- end -}}

{{/*
One step of slicePublisher.tls.caRotation on the Secret's data, as JSON. The states: steady (no
new-ca.crt); trusting (the bundle holds the old and the new CA, the old certificate is served, the
new one waits in new-tls.*); serving (the bundle holds both, the new certificate is served). Each
step moves one state on, does nothing where it is already done and fails where it would skip one:
between any two neighbouring states every bundle trusts every served certificate, so it does not
matter which a driver or a publisher pod still has. Call with (dict "root" $ "data" <data>).
*/}}
{{- define "kdra.rotatePublisherCA" -}}
{{- $data := .data }}
{{- $step := .root.Values.slicePublisher.tls.caRotation | default "" }}
{{- $trusting := hasKey $data "new-tls.crt" }}
{{- $serving := and (hasKey $data "new-ca.crt") (not $trusting) }}
{{- if eq $step "trustNew" }}
{{- if $serving }}
{{- fail "slicePublisher.tls.caRotation=trustNew, but the last rotation is not finished (the new certificate is served, the old CA still trusted): finish it with caRotation=dropOld first." }}
{{- else if not $trusting }}
{{- $new := include "kdra.newPublisherTls" .root | fromJson }}
{{- $bundle := printf "%s\n%s\n" (index $data "ca.crt" | b64dec | trim) (index $new "ca.crt" | b64dec | trim) }}
{{- $_ := set $data "ca.crt" ($bundle | b64enc) }}
{{- $_ := set $data "new-ca.crt" (index $new "ca.crt") }}
{{- $_ := set $data "new-tls.crt" (index $new "tls.crt") }}
{{- $_ := set $data "new-tls.key" (index $new "tls.key") }}
{{- $_ := set $data "new-ca-since" (now | unixEpoch | toString | b64enc) }}
{{- end }}
{{- else if eq $step "serveNew" }}
{{- if $trusting }}
{{- with get $data "new-ca-since" }}
{{- $age := sub (now | unixEpoch | int64) (b64dec . | int64) }}
{{- if lt $age 120 }}
{{- fail (printf "slicePublisher.tls.caRotation=serveNew %ds after trustNew: the kubelets take up to about two minutes to give every driver the new CA (longer with a kubelet syncFrequency above 1m). Run this upgrade again in %ds." $age (sub 120 $age)) }}
{{- end }}
{{- end }}
{{- $_ := set $data "tls.crt" (index $data "new-tls.crt") }}
{{- $_ := set $data "tls.key" (index $data "new-tls.key") }}
{{- $data = omit $data "new-tls.crt" "new-tls.key" "new-ca-since" }}
{{- else if not $serving }}
{{- fail "slicePublisher.tls.caRotation=serveNew, but the drivers' bundle holds no new CA: run caRotation=trustNew first, and this step once the drivers have it." }}
{{- end }}
{{- else if eq $step "dropOld" }}
{{- if $trusting }}
{{- fail "slicePublisher.tls.caRotation=dropOld, but the publisher still serves the old CA's certificate: run caRotation=serveNew first, and this step once every publisher pod serves the new one." }}
{{- else if $serving }}
{{- $_ := set $data "ca.crt" (index $data "new-ca.crt") }}
{{- $data = omit $data "new-ca.crt" }}
{{- end }}
{{- end }}
{{- $data | toJson -}}
{{- end -}}

{{/* The DNS names of the publisher's certificate, as a JSON list: its Service's. Call with $. */}}
{{- define "kdra.publisherDnsNames" -}}
{{- $service := include "kdra.componentName" (dict "root" . "component" "slice-publisher") }}
{{- $ns := .Release.Namespace }}
{{- list (include "kdra.publisherServiceName" .) $service (printf "%s.%s" $service $ns) (printf "%s.%s.svc.cluster.local" $service $ns) | toJson -}}
{{- end -}}

{{/* Whether the slice-publisher serves the opaque-config webhook ("true" or empty). Call with $. */}}
{{- define "kdra.webhookEnabled" -}}
{{- if and .Values.admission.opaqueConfigWebhook.enabled .Values.slicePublisher.enabled .Values.slicePublisher.tls.enabled }}true{{ end -}}
{{- end -}}
