package server

import (
	"net/http"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pipenet"
)

// servePipe serves h with cfg on an in-memory listener (pipenet) and returns it with the
// server and an h2c client of it (base URL "http://pipe"). Call it inside a
// synctest bubble; cleanup closes all three.
func servePipe(t *testing.T, h http.Handler, cfg Config) (*pipenet.Listener, *Server, *http.Client) {
	t.Helper()
	ln := pipenet.Listen()
	srv := New(h, cfg)
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	tr := &http.Transport{Protocols: new(http.Protocols), DialContext: ln.DialContext}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
		<-done
	})
	return ln, srv, &http.Client{Transport: tr}
}
