{{/*
Relabelling shared by the PodMonitor, the ServiceMonitor and the plain scrape configuration, so that every
broker series carries the labels the dashboards select on: job, cluster, namespace, pod, broker. Call with
(dict "root" $ "snake" true) for Prometheus's own configuration keys (source_labels), false for the Prometheus
operator's (sourceLabels).
*/}}
{{- define "ferry.brokerRelabelings" -}}
{{- $source := ternary "source_labels" "sourceLabels" .snake -}}
{{- $target := ternary "target_label" "targetLabel" .snake -}}
- {{ $target }}: job
  replacement: ferry-broker
- {{ $target }}: cluster
  replacement: {{ include "ferry.clusterName" .root }}
- {{ $source }}: [__meta_kubernetes_pod_label_apps_kubernetes_io_pod_index]
  {{ $target }}: broker
{{- end -}}

{{- define "ferry.operatorRelabelings" -}}
{{- $target := ternary "target_label" "targetLabel" .snake -}}
- {{ $target }}: job
  replacement: ferry-operator
- {{ $target }}: cluster
  replacement: {{ include "ferry.clusterName" .root }}
{{- end -}}

{{/* A monitor's credentials for the operator's /metrics under --metrics-auth kubernetes: the metrics-scraper
ServiceAccount's token Secret (monitoring.yaml). */}}
{{- define "ferry.operatorScrapeAuthorization" -}}
{{- if eq .Values.operator.metricsAuth "kubernetes" -}}
authorization:
  type: Bearer
  credentials:
    name: {{ include "ferry.fullname" . }}-metrics-scraper
    key: token
{{- end }}
{{- end }}

{{/* tls.enabled: the brokers' /metrics is HTTPS, its certificate checked against the cluster CA's bundle under the
bootstrap Service's name (which the certificate carries; scrapes go to pod addresses). */}}
{{- define "ferry.brokerScrapeServerName" -}}
{{ include "ferry.bootstrapName" . }}.{{ .Release.Namespace }}.svc
{{- end -}}
{{- define "ferry.brokerScrapeTls" -}}
{{- if .Values.tls.enabled -}}
scheme: https
tlsConfig:
  ca:
    secret:
      name: {{ include "ferry.clusterCaSecret" . }}-cert
      key: ca.crt
  serverName: {{ include "ferry.brokerScrapeServerName" . }}
{{- end }}
{{- end }}
