package handler

import "net/http"

// Mount serves the gRPC method path ("/pkg.Service/Method") with s, behind
// the handler's own gates, so that another streaming transport (such as
// stefreceiver's STEFDestination/Stream) is admitted exactly like the
// export stream: the Authenticator accepts it, it holds a unit of the
// process-wide stream bound while it is served, its tenant is identified
// and its quota applies (its request's context carries the tenant), the
// MetadataKeys are passed, and every refusal on the way is counted with
// its reason. s starts the gRPC call itself (grpcwire.StartCall) and
// records its own refusals (ingest.Pipeline.RecordRefusal).
//
// Only gRPC requests over HTTP/2 reach s; others on path get 415, as for
// the OTLP methods. Mount must be called before the handler serves its
// first request; it is not safe for concurrent use with ServeHTTP.
func (h *Handler) Mount(path string, s http.Handler) {
	if h.mounts == nil {
		h.mounts = make(map[string]http.Handler)
	}
	h.mounts[path] = s
}
