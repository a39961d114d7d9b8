package otlpcolumns

import (
	"bytes"
	"sync"
	"testing"
)

// TestNewDecoderRace: the first decoders of a signal, made at once by
// streams opened together, fill the nodes' tables once, and every one
// decodes with them, while encoders (a forward destination's, in the same
// process) walk the same nodes: go test -race finds a decoder that reads
// a table before it is filled.
func TestNewDecoderRace(t *testing.T) {
	for _, s := range signals {
		fresh := &schema{}
		schemaOf(fresh, s.sig)
		env := envelopes(t, s.name)[0]
		enc := NewEncoder(s.sig).Append(nil, env)
		if enc[0] != flagColumns {
			t.Fatalf("%s: sent untransformed", s.name)
		}
		const streams = 16
		var start, done sync.WaitGroup
		start.Add(1)
		errs := make([]string, streams)
		for i := range streams {
			done.Go(func() {
				start.Wait()
				src := enc
				if i%2 == 1 {
					src = newEncoder(fresh).Append(nil, env)
				}
				got, err := newDecoder(fresh).Decode(nil, src, len(env), nil)
				if err != nil || !bytes.Equal(got, env) {
					errs[i] = "not rebuilt"
					if err != nil {
						errs[i] = err.Error()
					}
				}
			})
		}
		start.Done()
		done.Wait()
		for i, e := range errs {
			if e != "" {
				t.Errorf("%s: stream %d: %s", s.name, i, e)
			}
		}
	}
}

// TestTablesCoverTheSchema: every node a walk can reach (a field's child,
// a node by its bucket) has its table once the signal has a decoder: a
// node without one would be a nil dereference on the first byte of
// input that reaches it.
func TestTablesCoverTheSchema(t *testing.T) {
	for _, s := range signals {
		d := NewDecoder(s.sig)
		seen := map[*node]bool{}
		var visit func(n *node, path string)
		visit = func(n *node, path string) {
			if n == nil || seen[n] {
				return
			}
			seen[n] = true
			if n.ops == nil {
				t.Errorf("%s: node %s has no table", s.name, path)
				return
			}
			for b, o := range n.ops {
				if o.flags&opMarker == 0 && o.wt == 2 && o.kind == kMsg && o.child == nil {
					t.Errorf("%s: node %s: tag %#x is a message without a node", s.name, path, b)
				}
				if o.flags&opSpread != 0 && int(o.col)+keyBuckets > d.s.cols {
					t.Errorf("%s: node %s: tag %#x spreads past the columns", s.name, path, b)
				}
			}
			for i, f := range n.f {
				visit(f.child, path+"."+string(rune('0'+i)))
			}
			if n.byCtx != nil {
				for i, c := range n.byCtx {
					visit(c, path+"/"+string(rune('0'+i)))
				}
			}
		}
		visit(d.s.root, "root")
		if len(seen) < 10 {
			t.Errorf("%s: only %d nodes", s.name, len(seen))
		}
	}
}
