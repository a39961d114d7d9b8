package handler

import (
	"strings"
	"sync"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// The gRPC health-checking protocol (grpc/doc/health-checking.md):
//
//	service Health {
//	  rpc Check(HealthCheckRequest) returns (HealthCheckResponse);
//	  rpc Watch(HealthCheckRequest) returns (stream HealthCheckResponse);
//	  rpc List(HealthListRequest) returns (HealthListResponse);
//	}
//	message HealthCheckRequest { string service = 1; }
//	message HealthCheckResponse {
//	  enum ServingStatus { UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2; SERVICE_UNKNOWN = 3; }
//	  ServingStatus status = 1;
//	}
//	message HealthListRequest {}
//	message HealthListResponse { map<string, HealthCheckResponse> statuses = 1; }
const (
	servingStatusServing        = 1
	servingStatusNotServing     = 2
	servingStatusServiceUnknown = 3
)

// healthServices are the names the health service knows: "" is the server as
// a whole, as the protocol defines.
var healthServices = func() []string {
	names := []string{""}
	for _, sig := range otlp.Signals {
		names = append(names, sig.Info().GRPCService)
	}
	return append(names, otlp.StreamService, otlp.UnaryEnvelopeService)
}()

// healthState is the serving status shared by every service, with a channel
// that is closed (and replaced) on each change so Watch streams wake up.
type healthState struct {
	mu      sync.Mutex
	serving bool
	changed chan struct{}
	down    chan struct{} // closed by shutdown
	// watches counts open Watch streams per connection (remote address).
	watches map[string]int
}

// addWatch registers a Watch on conn, or reports false if conn has
// maxHealthWatchesPerConn already.
func (hs *healthState) addWatch(conn string) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.watches[conn] >= maxHealthWatchesPerConn {
		return false
	}
	hs.watches[conn]++
	return true
}

func (hs *healthState) removeWatch(conn string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.watches[conn]--; hs.watches[conn] <= 0 {
		delete(hs.watches, conn)
	}
}

func (hs *healthState) init() {
	hs.serving = true
	hs.watches = map[string]int{}
	hs.changed = make(chan struct{})
	hs.down = make(chan struct{})
}

// shuttingDown returns a channel that is closed when shutdown begins.
func (hs *healthState) shuttingDown() <-chan struct{} { return hs.down }

func (hs *healthState) shutdown() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if !hs.serving {
		return
	}
	hs.serving = false
	close(hs.down)
	close(hs.changed)
	hs.changed = make(chan struct{})
}

func (hs *healthState) status(service string) (status int32, changed <-chan struct{}, shuttingDown bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	known := false
	for _, s := range healthServices {
		if s == service {
			known = true
			break
		}
	}
	switch {
	case !known:
		status = servingStatusServiceUnknown
	case hs.serving:
		status = servingStatusServing
	default:
		status = servingStatusNotServing
	}
	return status, hs.changed, !hs.serving
}

// maxHealthRequest bounds a health request message. A HealthCheckRequest is
// one service name (ours are under 60 bytes) and a HealthListRequest is
// empty; 1 KiB leaves room for future fields while no peer, and health
// calls may come without credentials, can make us buffer more.
const maxHealthRequest = 1 << 10

// readHealthRequest reads the one request message of Check, Watch or List
// (a server-streaming call also has exactly one request message). Like
// every request it is charged to the admission budget and read under the
// body read timeout; its size is capped at maxHealthRequest.
func (h *Handler) readHealthRequest(call *grpcwire.Call) (service string, st *grpcwire.Status) {
	call.LimitMessageSize(maxHealthRequest)
	t := h.getTicket(call.Context())
	defer h.putTicket(t)
	call.SetBudget(t)
	t.Msg, t.Scratch, st = call.ReadUnary(t.Msg, t.Scratch)
	if st != nil {
		return "", st
	}
	service, _, err := easyproto.GetString(t.Msg, 1)
	if err != nil {
		return "", grpcwire.Errorf(grpcwire.Internal, "grpc: error unmarshalling request: %v", err)
	}
	// The buffers go back to the pool: keep a copy.
	return strings.Clone(service), nil
}

func appendHealthResponse(dst []byte, status int32) []byte {
	m := responseMarshalers.Get()
	m.MessageMarshaler().AppendInt32(1, status)
	dst = m.Marshal(dst)
	responseMarshalers.Put(m)
	return dst
}

// healthCheck answers Check: NOT_FOUND for a service it does not know, as
// the protocol requires.
func (h *Handler) healthCheck(call *grpcwire.Call) {
	service, st := h.readHealthRequest(call)
	if st != nil {
		h.refuseGRPC(call, ingest.GRPC, st)
		return
	}
	status, _, _ := h.health.status(service)
	if status == servingStatusServiceUnknown {
		h.refuseGRPC(call, ingest.GRPC, grpcwire.Errorf(grpcwire.NotFound, "unknown service %q: this server reports \"\" (the server as a whole) and the OTLP services", service))
		return
	}
	_ = h.writeUnaryResponse(call, appendHealthResponse(nil, status))
}

// maxHealthWatchesPerConn bounds the Watch streams open at once on one
// connection. A Watch is held for as long as its client likes, may come
// without credentials, and costs a goroutine and a stream (about 13 KiB);
// the clients that use it (gRPC client-side health checking, service
// meshes) open one per service they watch, and this server has six. The
// bound is per connection, so a flood on some connections never refuses an
// honest Watch on another; the number of connections is the server's to
// bound.
const maxHealthWatchesPerConn = 16

// healthWatch streams the service's status now and after every change. An
// unknown service is reported as SERVICE_UNKNOWN, not an error, as the
// protocol requires. The stream ends when the client goes away or, after
// the NOT_SERVING update, when the server shuts down.
func (h *Handler) healthWatch(call *grpcwire.Call) {
	conn := call.Request().RemoteAddr // one per connection
	if !h.health.addWatch(conn) {
		st := grpcwire.Errorf(grpcwire.ResourceExhausted, "too many health Watch streams on this connection (%d); use Check, or another connection", maxHealthWatchesPerConn)
		st.RetryDelay = h.retryDelay
		h.refuseGRPC(call, ingest.GRPC, st)
		return
	}
	defer h.health.removeWatch(conn)
	service, st := h.readHealthRequest(call)
	if st != nil {
		h.refuseGRPC(call, ingest.GRPC, st)
		return
	}
	ctx := call.Context()
	last := int32(-1)
	for {
		status, changed, shuttingDown := h.health.status(service)
		if status != last {
			g := h.guards.get(call, nil)
			g.begin()
			err := call.WriteMessage(appendHealthResponse(nil, status))
			call.Flush()
			if h.guards.put(g) || err != nil {
				return
			}
			last = status
		}
		if shuttingDown {
			call.WriteStatus(grpcwire.Errorf(grpcwire.Unavailable, "server is shutting down"))
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			// Its grpc-timeout passed (DEADLINE_EXCEEDED) or the client
			// went away (CANCELLED).
			call.WriteStatus(ingest.DeadlineStatus(ctx, "on the health Watch stream"))
			return
		}
	}
}

// healthList answers List with every known service's status.
func (h *Handler) healthList(call *grpcwire.Call) {
	if _, st := h.readHealthRequest(call); st != nil {
		h.refuseGRPC(call, ingest.GRPC, st)
		return
	}
	m := responseMarshalers.Get()
	mm := m.MessageMarshaler()
	for _, s := range healthServices {
		status, _, _ := h.health.status(s)
		entry := mm.AppendMessage(1)
		entry.AppendString(1, s)
		entry.AppendMessage(2).AppendInt32(1, status)
	}
	resp := m.Marshal(nil)
	responseMarshalers.Put(m)
	_ = h.writeUnaryResponse(call, resp)
}
