package handler

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpview"
	"github.com/otlp-lite/otlp-lite/storage"
)

// idEngine is a storage.ItemSink that keeps span ids and rejects the span
// whose id ends in 2 (traceRequest's second span).
type idEngine struct {
	mu     sync.Mutex
	stored [][]byte
}

type idBatch struct {
	e   *idEngine
	ids [][]byte
	v   otlpdecode.Visitor
}

func (e *idEngine) BeginItems(context.Context, storage.Signal) (storage.ItemBatch, error) {
	b := &idBatch{e: e}
	b.v.Span = func(_ *otlpview.Resource, _ *otlpview.Scope, sp *otlpview.Span) error {
		if sp.SpanID[len(sp.SpanID)-1] == 2 {
			return errors.New("span id ending in 2 is reserved by this engine")
		}
		b.ids = append(b.ids, bytes.Clone(sp.SpanID))
		return nil
	}
	return b, nil
}

func (e *idEngine) Close() error { return nil }

func (b *idBatch) Visitor() *otlpdecode.Visitor { return &b.v }

func (b *idBatch) Commit(context.Context) error {
	b.e.mu.Lock()
	defer b.e.mu.Unlock()
	b.e.stored = append(b.e.stored, b.ids...)
	return nil
}

func (b *idBatch) Discard() {}

func (e *idEngine) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.stored)
}

// TestItemSinkPartialSuccessReachesClient: a span the engine's visitor
// rejects is the partial success of the gRPC and the OTLP/HTTP answer
// (protobuf and JSON), with the engine's reason; the others are stored.
func TestItemSinkPartialSuccessReachesClient(t *testing.T) {
	e := &idEngine{}
	c := startHandler(t, New(Config{Items: e, Logger: quietLogger()}))
	req := traceRequest(goodID, goodID, goodID)
	const reason = "span id ending in 2 is reserved by this engine"

	resp, err := c.Invoke(context.Background(), traceExport, req)
	if err != nil {
		t.Fatal(err)
	}
	ps, _, _ := easyproto.GetMessageData(resp, 1)
	rejected, _, _ := easyproto.GetInt64(ps, 1)
	msg, _, _ := easyproto.GetString(ps, 2)
	if rejected != 1 || !strings.Contains(msg, reason) || !strings.Contains(msg, "spans[1]") {
		t.Fatalf("gRPC partial_success: rejected=%d message=%q", rejected, msg)
	}

	hresp, err := http.Post(c.BaseURL+"/v1/traces", "application/x-protobuf", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(hresp.Body)
	hresp.Body.Close()
	ps, _, _ = easyproto.GetMessageData(body, 1)
	rejected, _, _ = easyproto.GetInt64(ps, 1)
	msg, _, _ = easyproto.GetString(ps, 2)
	if hresp.StatusCode != http.StatusOK || rejected != 1 || !strings.Contains(msg, reason) {
		t.Fatalf("OTLP/HTTP: %d, rejected=%d message=%q", hresp.StatusCode, rejected, msg)
	}

	const json = `{"resourceSpans":[{"scopeSpans":[{"spans":[` +
		`{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b101","name":"x"},` +
		`{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b102","name":"y"}]}]}]}`
	hresp, err = http.Post(c.BaseURL+"/v1/traces", "application/json", strings.NewReader(json))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(hresp.Body)
	hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"rejectedSpans":"1"`)) || !bytes.Contains(body, []byte(reason)) {
		t.Fatalf("OTLP/HTTP JSON: %d %s", hresp.StatusCode, body)
	}
	if n := e.count(); n != 2+2+1 {
		t.Fatalf("stored %d spans, want 5", n)
	}
}
