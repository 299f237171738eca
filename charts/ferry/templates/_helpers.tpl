{{/* The prefix of every object's name: fullnameOverride, else the release name. */}}
{{- define "ferry.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* The Ferry cluster's name (Topic, ConsumerGroup and User resources carry ferry.dev/cluster=<it>). */}}
{{- define "ferry.clusterName" -}}
{{- default (include "ferry.fullname" .) .Values.clusterName -}}
{{- end -}}

{{/* Labels on every object; the component (zookeeper, broker, operator) is added by each template. */}}
{{- define "ferry.labels" -}}
app.kubernetes.io/name: ferry
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
ferry.dev/cluster: {{ include "ferry.clusterName" . }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "broker"). */}}
{{- define "ferry.selectorLabels" -}}
app.kubernetes.io/name: ferry
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
Labels of one component's pods: (dict "root" $ "component" "broker"). Only labels that stay the same from one
chart version to the next (no helm.sh/chart, no app.kubernetes.io/version), so that a chart upgrade changing
nothing about a component does not restart it.
*/}}
{{- define "ferry.podLabels" -}}
{{ include "ferry.selectorLabels" . }}
ferry.dev/cluster: {{ include "ferry.clusterName" .root }}
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
A component's topologySpreadConstraints: (dict "root" $ "component" "broker" "constraints" list). A constraint
without a labelSelector selects the component's pods.
*/}}
{{- define "ferry.topologySpreadConstraints" -}}
{{- $selector := include "ferry.selectorLabels" . | fromYaml -}}
{{- $out := list -}}
{{- range .constraints -}}
{{- $c := deepCopy . -}}
{{- if not (hasKey $c "labelSelector") -}}
{{- $_ := set $c "labelSelector" (dict "matchLabels" $selector) -}}
{{- end -}}
{{- $out = append $out $c -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{- define "ferry.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}

{{- define "ferry.zookeeperImage" -}}
{{ .Values.zookeeper.image.repository }}:{{ default .Chart.AppVersion .Values.zookeeper.image.tag }}
{{- end -}}

{{- define "ferry.brokerName" -}}{{ include "ferry.fullname" . }}-broker{{- end -}}
{{- define "ferry.brokerHeadless" -}}{{ include "ferry.fullname" . }}-broker-headless{{- end -}}
{{- define "ferry.bootstrapName" -}}{{ include "ferry.fullname" . }}-bootstrap{{- end -}}
{{- define "ferry.zookeeperName" -}}{{ include "ferry.fullname" . }}-zookeeper{{- end -}}
{{- define "ferry.zookeeperHeadless" -}}{{ include "ferry.fullname" . }}-zookeeper-headless{{- end -}}
{{- define "ferry.operatorName" -}}{{ include "ferry.fullname" . }}-operator{{- end -}}

{{/* The Secret holding the password of the brokers' and the operator's ZooKeeper identity (zookeeper.acl). */}}
{{- define "ferry.zookeeperIdentitySecret" -}}
{{- default (printf "%s-zookeeper-identity" (include "ferry.fullname" .)) .Values.zookeeper.acl.existingSecret -}}
{{- end -}}

{{/* Where brokers and the operator find that password. */}}
{{- define "ferry.zookeeperIdentityDir" -}}/var/run/secrets/ferry/zookeeper-identity{{- end -}}

{{/* The Secret's volume: readable by the pod's user only (fsGroup adds group read). */}}
{{- define "ferry.zookeeperIdentityVolume" -}}
- name: zookeeper-identity
  secret:
    secretName: {{ include "ferry.zookeeperIdentitySecret" . }}
    items: [{key: password, path: password}]
    defaultMode: 0400
{{- end -}}

{{/* The brokers' bootstrap address inside the cluster. */}}
{{- define "ferry.bootstrapAddress" -}}
{{ include "ferry.bootstrapName" . }}.{{ .Release.Namespace }}.svc.{{ .Values.clusterDomain }}:{{ .Values.broker.ports.kafka }}
{{- end -}}

{{/* zookeeper.connect: the chart's ensemble, or the external one. */}}
{{- define "ferry.zookeeperConnect" -}}
{{- if .Values.zookeeper.enabled -}}
{{- $servers := list -}}
{{- range $i := until (int .Values.zookeeper.replicas) -}}
{{- $servers = append $servers (printf "%s-%d.%s.%s.svc.%s:2181" (include "ferry.zookeeperName" $) $i (include "ferry.zookeeperHeadless" $) $.Release.Namespace $.Values.clusterDomain) -}}
{{- end -}}
{{- join "," $servers -}}
{{- else -}}
{{- required "zookeeper.connect is required when zookeeper.enabled is false" .Values.zookeeper.connect -}}
{{- end -}}
{{- end -}}

{{/*
The brokers' StatefulSet replicas. Lowering broker.replicas must not remove pods that still hold partition
replicas: the chart then keeps the current count and sets the ferry.dev/brokers annotation, the operator drains
the leaving brokers and scales the StatefulSet down itself (the scale guard refuses anything else).
*/}}
{{- define "ferry.brokerStatefulSetReplicas" -}}
{{- $wanted := int .Values.broker.replicas -}}
{{- $current := lookup "apps/v1" "StatefulSet" .Release.Namespace (include "ferry.brokerName" .) -}}
{{- if and $current $current.spec (gt (int $current.spec.replicas) $wanted) -}}
{{- int $current.spec.replicas -}}
{{- else -}}
{{- $wanted -}}
{{- end -}}
{{- end -}}

{{/* The broker pods' names, one per ordinal the StatefulSet has (comma-separated): the only pods the operator
may delete when it rolls them. */}}
{{- define "ferry.brokerPodNames" -}}
{{- $name := include "ferry.brokerName" . -}}
{{- $names := list -}}
{{- range $i := until (int (include "ferry.brokerStatefulSetReplicas" .)) -}}
{{- $names = append $names (printf "%s-%d" $name $i) -}}
{{- end -}}
{{- join ", " $names -}}
{{- end -}}

{{/* Pod security shared by every container: unprivileged, read-only root file system. */}}
{{- define "ferry.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* The ClusterRole that may get the operator's /metrics (--metrics-auth kubernetes); cluster-scoped, so named
per release and namespace. */}}
{{- define "ferry.operatorMetricsReader" -}}
{{ include "ferry.operatorName" . }}-{{ .Release.Namespace }}-metrics-reader
{{- end }}

{{/* tls.enabled: the certificates' Secrets (the operator makes and renews them) and where the brokers find theirs. */}}
{{- define "ferry.clusterCaSecret" -}}
{{- default (printf "%s-cluster-ca" (include "ferry.fullname" .)) .Values.tls.clusterCaSecret -}}
{{- end -}}
{{- define "ferry.clientsCaSecret" -}}
{{- default (printf "%s-clients-ca" (include "ferry.fullname" .)) .Values.tls.clientsCaSecret -}}
{{- end -}}
{{- define "ferry.brokerTlsSecret" -}}{{ include "ferry.fullname" . }}-broker-tls{{- end -}}
{{- define "ferry.tlsDir" -}}/var/run/secrets/ferry/tls{{- end -}}

{{/* The brokers' principal when they log in to each other with their certificate (its CN), a super user. */}}
{{- define "ferry.brokerCommonName" -}}{{ include "ferry.clusterName" . }}-broker{{- end -}}

{{/* The operator's Kafka user, a super user whose SCRAM credential it makes from the password in its Secret. */}}
{{- define "ferry.operatorKafkaUser" -}}ferry-operator{{- end -}}
{{- define "ferry.operatorIdentitySecret" -}}
{{- default (printf "%s-identity" (include "ferry.operatorName" .)) .Values.operator.existingSecret -}}
{{- end -}}
{{- define "ferry.operatorIdentityDir" -}}/var/run/secrets/ferry/operator-identity{{- end -}}
{{- define "ferry.clusterCaDir" -}}/var/run/secrets/ferry/cluster-ca{{- end -}}

{{/* Every address a broker is reached at, for its certificate: each broker by name, the bootstrap Service, and
tls.extraAddresses (comma-separated). */}}
{{- define "ferry.brokerCertificateAddresses" -}}
{{- $headless := printf "%s.%s.svc" (include "ferry.brokerHeadless" .) .Release.Namespace -}}
{{- $bootstrap := include "ferry.bootstrapName" . -}}
{{- $addresses := list (printf "*.%s" $headless) (printf "*.%s.%s" $headless .Values.clusterDomain) $bootstrap (printf "%s.%s" $bootstrap .Release.Namespace) (printf "%s.%s.svc" $bootstrap .Release.Namespace) (printf "%s.%s.svc.%s" $bootstrap .Release.Namespace .Values.clusterDomain) -}}
{{- join "," (concat $addresses .Values.tls.extraAddresses) -}}
{{- end -}}

{{/* A duration of the values (a whole number and s, m, h or d) as Go writes one, which cert-manager reads. */}}
{{- define "ferry.goDuration" -}}
{{- if hasSuffix "d" . -}}{{ mul (trimSuffix "d" . | int) 24 }}h{{- else -}}{{ . }}{{- end -}}
{{- end -}}
