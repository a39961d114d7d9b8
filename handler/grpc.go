package handler

import (
	"net/http"
	"strings"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// healthService is the gRPC health service; the export services are in
// otlp's signal table.
const healthService = "grpc.health.v1.Health"

// serveGRPC validates the call and routes it by its path, "/service/method"
// (PROTOCOL-HTTP2.md, "Path"). Unknown services and methods get UNIMPLEMENTED
// with grpc-go's wording.
func (h *Handler) serveGRPC(w http.ResponseWriter, r *http.Request) {
	call, st := grpcwire.StartCall(w, r, h.limits)
	if st != nil {
		// StartCall has answered.
		h.recordRefusal(r, ingest.GRPC, 0, st)
		return
	}
	defer call.Close()
	if n := h.p.TenantMaxRequest(r.Context()); n > 0 {
		call.LimitMessageSize(n)
	}
	if h.bodyTimeout > 0 {
		call.SetMessageReadTimeout(h.bodyTimeout)
	}
	service, method, ok := splitMethod(r.URL.Path)
	if !ok {
		h.refuseGRPC(call, ingest.GRPC, grpcwire.Errorf(grpcwire.Unimplemented, "malformed method name: %q", r.URL.Path))
		return
	}
	if sig := otlp.SignalByGRPCService(service); sig != 0 {
		if method == "Export" {
			if st := kindOf(sig).headerStatus(r.Header); st != nil {
				h.refuseGRPC(call, ingest.GRPC, st)
				return
			}
			h.exportUnary(call, kindOf(sig))
			return
		}
		h.refuseGRPC(call, ingest.GRPC, grpcwire.Errorf(grpcwire.Unimplemented, "unknown method %s for service %s", method, service))
		return
	}
	switch service {
	case otlp.StreamService, otlp.UnaryEnvelopeService:
		if kind := kindOf(otlp.SignalByStreamMethod(method)); kind != nil {
			if st := kind.headerStatus(r.Header); st != nil {
				h.refuseGRPC(call, ingest.GRPC, st)
				return
			}
			if service == otlp.StreamService {
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
		h.refuseGRPC(call, ingest.GRPC, grpcwire.Errorf(grpcwire.Unimplemented, "unknown service %s", service))
		return
	}
	h.refuseGRPC(call, ingest.GRPC, grpcwire.Errorf(grpcwire.Unimplemented, "unknown method %s for service %s", method, service))
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
