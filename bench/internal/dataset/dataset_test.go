package dataset

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/VictoriaMetrics/easyproto"
)

// traces builds a TracesData of resources × scopes × spans, each span a
// distinct name (field 5), each resource and scope a name of its own.
func traces(resources, scopes, spans int) (msg []byte, names []string) {
	for r := range resources {
		res := tag(1, tag(1, []byte(fmt.Sprintf("resource-%d", r)))) // resource
		for s := range scopes {
			scope := tag(1, tag(1, []byte(fmt.Sprintf("scope-%d-%d", r, s))))
			for i := range spans {
				name := fmt.Sprintf("span-%d-%d-%d", r, s, i)
				names = append(names, name)
				scope = append(scope, tag(2, tag(5, []byte(name)))...)
			}
			res = append(res, tag(2, scope)...)
		}
		msg = append(msg, tag(1, res)...)
	}
	return msg, names
}

// spanNames walks a request and returns its spans' names, each prefixed
// by its resource's and scope's heads, so a span moved to another
// resource or scope shows.
func spanNames(t *testing.T, req []byte) []string {
	var out []string
	var fc easyproto.FieldContext
	walk := func(b []byte, field uint32, f func([]byte)) []byte {
		var head []byte
		for src := b; len(src) > 0; {
			rest, err := fc.NextField(src)
			if err != nil {
				t.Fatal(err)
			}
			if fc.FieldNum == field {
				d, _ := fc.MessageData()
				f(d)
			} else {
				head = append(head, src[:len(src)-len(rest)]...)
			}
			src = rest
		}
		return head
	}
	walk(req, 1, func(res []byte) {
		walk(res, 2, func(scope []byte) {
			walk(scope, 2, func(span []byte) {
				var fs easyproto.FieldContext
				fs.NextField(span)
				name, _ := fs.String()
				out = append(out, name)
			})
		})
	})
	return out
}

// Cut keeps every span once, in order, under its own resource and scope;
// a request ends at the item bound, and with byResource at each resource.
func TestCut(t *testing.T) {
	msg, names := traces(3, 2, 5)
	for _, c := range []struct {
		items      int
		byResource bool
		requests   int
	}{
		{4, false, 8},       // 30 spans, 4 a request
		{1 << 30, true, 3},  // one request per resource
		{7, true, 6},        // 10 spans a resource: 7 + 3, three times
		{1 << 30, false, 1}, // all in one
	} {
		reqs, total := Cut([][]byte{msg}, false, c.items, c.byResource)
		if total != len(names) || len(reqs) != c.requests {
			t.Fatalf("items %d by resource %v: %d requests of %d spans, want %d of %d", c.items, c.byResource, len(reqs), total, c.requests, len(names))
		}
		var got []string
		for _, r := range reqs {
			n := spanNames(t, r)
			if len(n) > c.items {
				t.Fatalf("a request of %d spans, bound %d", len(n), c.items)
			}
			got = append(got, n...)
			// Each request's resources and scopes are the spans' own.
			for _, name := range n {
				var rr, s, i int
				fmt.Sscanf(name, "span-%d-%d-%d", &rr, &s, &i)
				if !bytes.Contains(r, []byte(fmt.Sprintf("resource-%d", rr))) || !bytes.Contains(r, []byte(fmt.Sprintf("scope-%d-%d", rr, s))) {
					t.Fatalf("%s without its resource or scope", name)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(names) {
			t.Fatalf("items %d: spans %v, want %v", c.items, got, names)
		}
	}
}
