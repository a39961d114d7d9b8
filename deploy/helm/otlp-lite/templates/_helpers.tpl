{{/*
The release's name for every object: the release name, with the chart's
name appended unless the release name already contains it.
*/}}
{{- define "otlp-lite.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
Labels. No helm.sh/chart or managed-by label: the plain manifests in
deploy/kubernetes are this chart's default rendering, applied without Helm.
*/}}
{{- define "otlp-lite.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "otlp-lite.labels" -}}
{{ include "otlp-lite.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
{{- end -}}

{{/*
The memory model of docs/limits.md, computed from .Values.memoryModel (the
formula is in values.yaml): a JSON object of byte counts, read back with
fromJson. Integer arithmetic, as the binary derives its windows and stream
bound (server.WindowFor, -max-streams).
*/}}
{{- define "otlp-lite.memoryModel" -}}
{{- $m := .Values.memoryModel -}}
{{- $KiB := 1024 -}}
{{- $MiB := 1048576 -}}
{{- $R := mul $m.admissionRequestLimitMiB $MiB -}}
{{- $W := mul $m.admissionWaitingLimitMiB $MiB -}}
{{- $C := int64 $m.maxConnections -}}
{{- $H := int64 $m.maxHeaderBytes -}}
{{- $F := int64 $m.http2MaxFrameSize -}}
{{- $S := max (div $R (mul 32 $KiB)) 4096 -}}
{{- $w := min (max (div $R $C) (mul 256 $KiB)) (mul 4 $MiB) -}}
{{- $k := .Values.kafka -}}
{{- $kafka := 0 -}}
{{- if $k.storage }}{{ $kafka = add $kafka (mul $k.maxBufferedMiB $MiB) }}{{ end -}}
{{- if $k.consume }}{{ $kafka = add $kafka (mul $k.consumeMaxDecompressedMiB $MiB) (mul $k.consumeFetchMaxMiB $MiB $k.consumeClusterBrokers) }}{{ end -}}
{{- if eq (toString (index .Values.config "self-telemetry-endpoint" | default "")) "self" -}}
{{- /* the self-telemetry reserve beside the request budget (service.selfReserve) */ -}}
{{- $kafka = add $kafka (mul 4 $MiB) -}}
{{- end -}}
{{- $heap := add (mul 2 (add $R $W)) (mul 48 $MiB) $kafka -}}
{{- $streams := mul $S (add (mul 32 $KiB) $H) -}}
{{- $conns := mul $C (add $w $F (mul 148 $KiB)) -}}
{{- $worst := add $R $W $streams $conns (mul 48 $MiB) $kafka -}}
{{- dict "requestLimit" $R "waitingLimit" $W "heap" $heap "worst" $worst | toJson -}}
{{- end -}}

{{/*
The pod's resources: .Values.resources when set, else derived from the
memory model (rounded up to whole MiB).
*/}}
{{- define "otlp-lite.resources" -}}
{{- if .Values.resources -}}
{{- toYaml .Values.resources -}}
{{- else -}}
{{- $mm := include "otlp-lite.memoryModel" . | fromJson -}}
{{- $MiB := 1048576 -}}
requests:
  cpu: {{ .Values.cpuRequest | quote }}
  memory: {{ printf "%dMi" (div (add (int64 $mm.heap) (sub $MiB 1)) $MiB) | quote }}
limits:
  memory: {{ printf "%dMi" (div (add (int64 $mm.worst) (sub $MiB 1)) $MiB) | quote }}
{{- end -}}
{{- end -}}

{{/*
The receiver's settings as OTLP_LITE_* variables: a dict of flag name to
value, the chart's own first, then .Values.config over them.
*/}}
{{- define "otlp-lite.settings" -}}
{{- $v := .Values -}}
{{- $mm := include "otlp-lite.memoryModel" . | fromJson -}}
{{- $s := dict
  "grpc-addr" (printf ":%d" (int $v.ports.grpc))
  "http-addr" (printf ":%d" (int $v.ports.http))
  "admin-addr" (printf ":%d" (int $v.ports.admin))
  "data-dir" "/data"
  "admission-request-limit" (printf "%d" (int64 $mm.requestLimit))
  "admission-waiting-limit" (printf "%d" (int64 $mm.waitingLimit))
  "max-connections" (printf "%d" (int64 $v.memoryModel.maxConnections))
  "max-header-bytes" (printf "%d" (int64 $v.memoryModel.maxHeaderBytes))
  "http2-max-frame-size" (printf "%d" (int64 $v.memoryModel.http2MaxFrameSize))
  "shutdown-timeout" (printf "%ds" (int $v.shutdownTimeoutSeconds))
  "storage-max-bytes" (printf "%dMiB" (div (mul $v.persistence.sizeGiB 1024 $v.persistence.retentionPercent) 100))
-}}
{{- with $v.tenants -}}
{{- if .quotas }}{{ $_ := set $s "tenant-quota-file" "/etc/otlp-lite/tenants/quotas" }}{{ end -}}
{{- if .header }}{{ $_ := set $s "tenant-header" .header }}{{ end -}}
{{- if .required }}{{ $_ := set $s "tenant-required" "true" }}{{ end -}}
{{- if .tokensSecret }}{{ $_ := set $s "auth-token-file" "/etc/otlp-lite/tokens/tokens" }}{{ end -}}
{{- end -}}
{{- with $v.forwarding -}}
{{- if .destinations -}}
{{- $d := list -}}
{{- range .destinations }}{{ $d = append $d (printf "%s=%s" .name .url) }}{{ end -}}
{{- $_ := set $s "forward" (join " " $d) -}}
{{- end -}}
{{- if .deadLetterMaxBytes }}{{ $_ := set $s "forward-dead-letter-max-bytes" .deadLetterMaxBytes }}{{ end -}}
{{- end -}}
{{- with $v.kafka -}}
{{- if .storage -}}
{{- $_ := set $s "storage" "kafka" -}}
{{- $_ := set $s "kafka-brokers" .brokers -}}
{{- $_ := set $s "kafka-max-buffered-bytes" (printf "%d" (mul .maxBufferedMiB 1048576)) -}}
{{- end -}}
{{- if .consume -}}
{{- $_ := set $s "kafka-consume" .consume -}}
{{- $_ := set $s "kafka-consume-max-decompressed-bytes" (printf "%d" (mul .consumeMaxDecompressedMiB 1048576)) -}}
{{- $_ := set $s "kafka-consume-fetch-max-bytes" (printf "%d" (mul .consumeFetchMaxMiB 1048576)) -}}
{{- end -}}
{{- if .tls }}{{ $_ := set $s "kafka-tls" "true" }}{{ end -}}
{{- if .caSecret }}{{ $_ := set $s "kafka-tls-ca" "/etc/otlp-lite/kafka/ca.crt" }}{{ end -}}
{{- if .sasl.mechanism }}{{ $_ := set $s "kafka-sasl-mechanism" .sasl.mechanism }}{{ end -}}
{{- if .sasl.username }}{{ $_ := set $s "kafka-sasl-username" .sasl.username }}{{ end -}}
{{- end -}}
{{- range $k, $val := $v.config }}{{ $_ := set $s $k (toString $val) }}{{ end -}}
{{- toJson $s -}}
{{- end -}}

{{/* The environment variable of serve flag NAME. */}}
{{- define "otlp-lite.envName" -}}
{{- printf "OTLP_LITE_%s" (. | upper | replace "-" "_") -}}
{{- end -}}
