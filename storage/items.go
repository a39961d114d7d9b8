package storage

import (
	"context"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// ItemSink receives validated requests as decoded items instead of bytes:
// the path of a storage engine that embeds the receiver and keeps spans,
// data points, log records or profiles in its own form. It is handed the
// items as validation walks them (otlpdecode.Visitor), in the same pass,
// and may reject single items, which the client then reads in its partial
// success. The byte Sink stays the path of the disk log and Kafka; a
// pipeline has one or the other (ingest.Config).
//
// The pipeline calls, for one request:
//
//  1. BeginItems, on the request's goroutine (the one that called
//     ingest.Pipeline.Export), once the request is decompressed,
//     transcoded and admitted, and its tenant's byte bucket can hold it,
//     before validation. An error refuses the request as Sink.Write's
//     error would (ErrRejected: not retryable; anything else: retry
//     later); nothing was visited, nothing is charged to the tenant.
//  2. The batch's Visitor functions, for every item validation accepts,
//     in wire order, one at a time, on a validation worker goroutine (not
//     the request's). Everything they do happens before the call of step
//     3 (the worker hands its result to the request's goroutine over a
//     channel), so the batch needs no lock for state only they and step 3
//     touch. Visitor is called once, before the walk.
//  3. Exactly one of Commit or Discard, once, on the request's goroutine.
//     The pipeline does not use the batch afterwards: the engine may pool
//     it (a pooled batch with its Visitor made once keeps the request
//     path free of allocations).
//
// Lifetime: the views a Visitor function gets, and every string or byte
// slice read from them, alias the request's buffer, which the pipeline
// pools and reuses for the next request once Export returns, and the
// decoder's buffers, which the next item reuses. They are valid only until
// the function returns: the engine copies what it keeps (into its batch's
// own buffers, strings.Clone, bytes.Clone). otlpdecode/visittest.Check
// holds an engine to this in its tests.
//
// Close releases the sink; no request may be in progress or follow it.
type ItemSink interface {
	BeginItems(ctx context.Context, signal Signal) (ItemBatch, error)
	Close() error
}

// ItemBatch is one request's items on their way into an ItemSink.
//
// Visitor returns the functions validation calls for the request's items
// (nil functions: items of that signal are accepted without a call). A
// function returning an error rejects its item: it is not stored, and the
// error's text is the client's partial-success message for it (`cannot
// store span: key too long`, not a whole-request failure). Its functions
// are called for this request only, one at a time, so unlike a Visitor
// shared by requests they need not be safe for concurrent use.
//
// Commit makes durable the items the visitor accepted. It is called only
// when validation succeeded, at least one item was accepted, the request's
// context had not ended, and its tenant's quota took the request's bytes
// and items. Its error means what Sink.Write's does: nil only once the
// items are stored as durably as the engine promises (the client is then
// told they are stored); an error wrapping ErrRejected is not retryable;
// any other error is retryable and does not say nothing was stored (a
// retry may then store items twice; OTLP is at-least-once), unless it
// wraps ErrNotStored (NotStored), which promises that nothing of the
// request was or will be stored, and gives the tenant its quota charge
// back.
//
// Discard drops whatever the batch holds; nothing of it may be stored.
// It is called instead of Commit when the request is not to be stored
// after BeginItems succeeded: validation refused it as a whole (a
// malformed request, whose items before the malformed part were visited),
// the decoder failed, every item was rejected (or the request held none),
// the request's context ended before Commit, or its tenant's quota
// throttled it.
type ItemBatch interface {
	Visitor() *otlpdecode.Visitor
	Commit(ctx context.Context) error
	Discard()
}
