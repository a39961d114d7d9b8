package dataset

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// Every request cut from each dataset is a valid export request whose
// items are what Cut says, and together they hold every item.
func TestCutKeepsEveryItem(t *testing.T) {
	for sig, name := range Files {
		path := filepath.Join(Dir(), name)
		if _, err := os.Stat(path); err != nil {
			t.Skipf("no dataset: %v", err)
		}
		recs, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		check := otlpdecode.CheckTraces
		if sig == "metrics" {
			check = otlpdecode.CheckMetrics
		}
		whole := 0
		for _, r := range recs {
			// A TracesData / MetricsData is an export request too.
			res, err := check(r, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			whole += res.Items
		}
		reqs, err := Cut(recs, IsMetrics(path), 512, false)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for i, r := range reqs {
			res, err := check(r.Proto, nil)
			if err != nil || res.Items != r.Items || res.Rejected != 0 {
				t.Fatalf("%s request %d: %d items (%d rejected, err %v), Cut says %d", name, i, res.Items, res.Rejected, err, r.Items)
			}
			sum += r.Items
		}
		if sum != whole {
			t.Fatalf("%s: the requests hold %d items, the dataset %d", name, sum, whole)
		}
		t.Logf("%s: %d items in %d requests of about 512", name, sum, len(reqs))
	}
}
