package visittest_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpdecode/visittest"
	"github.com/otlp-lite/otlp-lite/otlpview"
)

// store is a toy storage engine fed by a Visitor: it keeps each span's
// name by span id, copying (as the contract says) or not.
type store struct {
	mu    sync.Mutex
	copy  bool
	names map[string]string
}

func (s *store) visitor() *otlpdecode.Visitor {
	return &otlpdecode.Visitor{Span: func(_ *otlpview.Resource, _ *otlpview.Scope, sp *otlpview.Span) error {
		name := sp.Name
		if s.copy {
			name = strings.Clone(name) // what an engine must do with what it keeps
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.names[string(sp.SpanID)] = name
		return nil
	}}
}

// expected reads the span names of src with the views, copied.
func expected(t *testing.T, src []byte) map[string]string {
	want := map[string]string{}
	var d otlpview.TracesDecoder
	if err := d.Decode(src, func(_ *otlpview.Resource, _ *otlpview.Scope, sp *otlpview.Span) error {
		want[string(sp.SpanID)] = strings.Clone(sp.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestCheckCatchesKeptViews: an engine that keeps a string of a view
// without copying it holds the poison once Check returns, and Check's
// caller sees it; the engine that copies keeps every name intact.
func TestCheckCatchesKeptViews(t *testing.T) {
	src := pbtest.Golden(t, "traces_all_fields.pb")
	want := expected(t, src)
	for _, copying := range []bool{true, false} {
		s := &store{copy: copying, names: map[string]string{}}
		res := visittest.Check(t, otlp.Traces, src, nil, s.visitor())
		if res.Items != len(want) || res.Rejected != 0 {
			t.Fatalf("result %+v, want %d spans", res, len(want))
		}
		intact := true
		for id, name := range want {
			if s.names[id] != name {
				intact = false
			}
		}
		if intact != copying {
			t.Errorf("engine copying %v: names intact %v after the buffer's reuse", copying, intact)
		}
		if !copying {
			for _, name := range s.names {
				if strings.Count(name, string([]byte{visittest.Poison})) != len(name) {
					t.Errorf("kept name %q is not poisoned", name)
				}
			}
		}
	}
}
