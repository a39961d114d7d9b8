package handler

import (
	"net/http"
	"strings"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// The gRPC services this handler serves, by full service name.
const (
	traceService   = "opentelemetry.proto.collector.trace.v1.TraceService"
	metricsService = "opentelemetry.proto.collector.metrics.v1.MetricsService"
	logsService    = "opentelemetry.proto.collector.logs.v1.LogsService"
	healthService  = "grpc.health.v1.Health"
)

// serveGRPC validates the call and routes it by its path, "/service/method"
// (PROTOCOL-HTTP2.md, "Path"). Unknown services and methods get UNIMPLEMENTED
// with grpc-go's wording.
func (h *Handler) serveGRPC(w http.ResponseWriter, r *http.Request) {
	call, st := grpcwire.StartCall(w, r, h.limits)
	if st != nil {
		// StartCall has answered.
		h.recordRefusal(r, transportGRPC, 0, st)
		return
	}
	defer call.Close()
	if h.bodyTimeout > 0 {
		call.SetMessageReadTimeout(h.bodyTimeout)
	}
	service, method, ok := splitMethod(r.URL.Path)
	if !ok {
		h.refuseGRPC(call, transportGRPC, grpcwire.Errorf(grpcwire.Unimplemented, "malformed method name: %q", r.URL.Path))
		return
	}
	switch service {
	case traceService:
		if method == "Export" {
			h.exportUnary(call, &tracesSignal)
			return
		}
	case metricsService:
		if method == "Export" {
			h.exportUnary(call, &metricsSignal)
			return
		}
	case logsService:
		if method == "Export" {
			h.exportUnary(call, &logsSignal)
			return
		}
	case streamService, unaryEnvelopeSvc:
		var kind *signalKind
		switch method {
		case "ExportTraces":
			kind = &tracesSignal
		case "ExportMetrics":
			kind = &metricsSignal
		case "ExportLogs":
			kind = &logsSignal
		}
		if kind != nil {
			if service == streamService {
				h.exportStream(call, kind)
			} else {
				h.exportEnvelopeUnary(call, kind)
			}
			return
		}
	case healthService:
		switch method {
		case "Check":
			h.healthCheck(call)
			return
		case "Watch":
			h.healthWatch(call)
			return
		case "List":
			h.healthList(call)
			return
		}
	default:
		h.refuseGRPC(call, transportGRPC, grpcwire.Errorf(grpcwire.Unimplemented, "unknown service %s", service))
		return
	}
	h.refuseGRPC(call, transportGRPC, grpcwire.Errorf(grpcwire.Unimplemented, "unknown method %s for service %s", method, service))
}

// splitMethod splits "/pkg.Service/Method" into its service and method.
func splitMethod(path string) (service, method string, ok bool) {
	if !strings.HasPrefix(path, "/") {
		return "", "", false
	}
	path = path[1:]
	i := strings.LastIndexByte(path, '/')
	if i <= 0 || i == len(path)-1 {
		return "", "", false
	}
	return path[:i], path[i+1:], true
}
