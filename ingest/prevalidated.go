package ingest

import (
	"context"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// Validated is what a transport vouches for in a request it built itself
// from another encoding (a STEF decoder writing OTLP protobuf), having
// enforced, while it wrote it, every rule the pipeline's validation
// (otlpdecode.Check*) enforces: well-formed protobuf of the signal's
// request, and no item it would reject (the transport dropped or
// reported those itself, as its protocol lets it).
//
// With it, Export skips its validation pass over bytes whose every field
// the transport has just written, and the hand-off of that pass to the
// check pool (a goroutine switch each way per request): the one cost a
// stream of small requests pays per request that does nothing for a
// request built here. A transport that cannot promise a rule the pipeline
// is configured for (UTF8, a lower nesting bound) is validated as usual,
// as is every request when the pipeline stores decoded items
// (Config.Items: they are handed to it by the validation pass).
type Validated struct {
	// Items is the number of items (spans, data points, log records) in
	// the request: what validation would have counted.
	Items int
	// UTF8 says every string field is valid UTF-8 (needed only when the
	// pipeline validates UTF-8, Config.Decode.ValidateUTF8).
	UTF8 bool
	// MaxAnyValueDepth is the deepest AnyValue nesting the transport
	// writes (it refuses deeper values itself); the pipeline's own bound
	// (Config.Decode.MaxAnyValueDepth) must not be lower.
	MaxAnyValueDepth int
}

// prevalidation is a ticket's Validated while ExportValidated runs it.
type prevalidation struct {
	on    bool
	items int
}

// ExportValidated is Export for a request the transport vouches for (v):
// the same admission, quotas, sink, metrics, request log and errors, with
// the validation pass skipped when v covers what the pipeline validates.
// req.Ticket must be set (the transport read the request into it);
// without it, for profiles (validation counts their samples), and for the
// zero Validated (it vouches for nothing), the request is validated as
// Export does.
func (p *Pipeline) ExportValidated(ctx context.Context, req Request, v Validated) (Result, error) {
	t := req.Ticket
	if kind := kindOf(req.Signal); t != nil && kind != nil && !kind.countSamples && p.covers(v) {
		t.pre = prevalidation{on: true, items: v.Items}
		defer func() { t.pre = prevalidation{} }()
	}
	return p.Export(ctx, req)
}

// covers reports whether v is all the pipeline's validation would check.
func (p *Pipeline) covers(v Validated) bool {
	if p.items != nil {
		return false
	}
	if p.decodeOpts.ValidateUTF8 && !v.UTF8 {
		return false
	}
	depth := p.decodeOpts.MaxAnyValueDepth
	if depth <= 0 {
		depth = otlpdecode.DefaultMaxAnyValueDepth
	}
	return v.MaxAnyValueDepth > 0 && v.MaxAnyValueDepth <= depth
}

// check validates msg on the check pool, or takes the transport's word
// for it (ExportValidated).
func (p *Pipeline) check(t *Ticket, kind *signalKind, msg []byte, opts *otlpdecode.Options) (otlpdecode.Result, error) {
	if t.pre.on && opts.Visit == nil {
		return otlpdecode.Result{Items: t.pre.items}, nil
	}
	return p.checks.run(&t.check, kind.check, msg, opts)
}
