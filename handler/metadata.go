package handler

import (
	"net/http"
	"net/textproto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// Client metadata (Config.MetadataKeys): the values of chosen request
// headers, passed to the sink in the context of its Write
// (storage.WithMetadata), as the OpenTelemetry Collector's receivers pass
// client.Metadata to its exporters with include_metadata. gRPC metadata
// arrives as HTTP/2 headers, so one lookup serves gRPC and OTLP/HTTP.
//
// Cost: nothing when no key is configured (one length check), and nothing
// either when a request carries none of the keys; otherwise one slice of
// entries and the context and request copies that carry it. The values are
// the request's own header strings, not copies.

// metadataKeys is Config.MetadataKeys prepared for lookups.
type metadataKeys struct {
	names []string // as configured: the storage.MetadataEntry keys
	canon []string // textproto canonical forms: the http.Header keys
}

func newMetadataKeys(keys []string) *metadataKeys {
	if len(keys) == 0 {
		return nil
	}
	m := &metadataKeys{}
	for _, k := range keys {
		if k == "" {
			continue
		}
		m.names = append(m.names, k)
		m.canon = append(m.canon, textproto.CanonicalMIMEHeaderKey(k))
	}
	if len(m.names) == 0 {
		return nil
	}
	return m
}

// withClientMetadata returns r carrying, for the sink, the values of the
// configured headers r has; r itself when it has none of them.
func (h *Handler) withClientMetadata(r *http.Request) *http.Request {
	m := h.metaKeys
	n := 0
	for _, c := range m.canon {
		if len(r.Header[c]) > 0 {
			n++
		}
	}
	if n == 0 {
		return r
	}
	md := make(storage.Metadata, 0, n)
	for i, c := range m.canon {
		if vs := r.Header[c]; len(vs) > 0 {
			md = append(md, storage.MetadataEntry{Key: m.names[i], Values: vs})
		}
	}
	return r.WithContext(storage.WithMetadata(r.Context(), md))
}
