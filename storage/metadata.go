package storage

import (
	"context"
	"strings"
)

// The client metadata of a write travels in its context, as the tenant
// does (tenant.go) and for the same reasons: the Sink interface stays as
// it is, and nothing is set, so nothing is paid, unless a receiver was
// configured to pass some keys (handler.Config.MetadataKeys).
//
// Client metadata is what the OpenTelemetry Collector calls it
// (go.opentelemetry.io/collector/client.Metadata): the headers of the
// request that carried the data, gRPC metadata or HTTP headers. A sink
// uses it to copy chosen headers into what it stores (the Kafka sink's
// include_metadata_keys, topic_from_metadata_key and
// message_key_from_metadata_key).

// MetadataEntry is one key of a write's client metadata and its values,
// in the order the client sent them.
type MetadataEntry struct {
	// Key is the name as the receiver was configured with it (not as the
	// client spelled it: header names are case-insensitive).
	Key    string
	Values []string
}

// Metadata is the client metadata of a write: only the keys the receiver
// was configured to pass, and only those the request carried. It and its
// values are read-only, and valid only during Sink.Write.
type Metadata []MetadataEntry

// Get returns the values of key, compared case-insensitively (as header
// names are, and as the Collector's client.Metadata.Get does), or nil.
func (md Metadata) Get(key string) []string {
	for _, e := range md {
		if strings.EqualFold(e.Key, key) {
			return e.Values
		}
	}
	return nil
}

type metadataKey struct{}

// WithMetadata returns ctx carrying md, the client metadata of the
// request whose data is written with ctx.
func WithMetadata(ctx context.Context, md Metadata) context.Context {
	return context.WithValue(ctx, metadataKey{}, md)
}

// MetadataFrom returns the client metadata of the write whose context is
// ctx; nil when the receiver passes none.
func MetadataFrom(ctx context.Context) Metadata {
	md, _ := ctx.Value(metadataKey{}).(Metadata)
	return md
}
