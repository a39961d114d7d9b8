package kafkasource

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestLooksJSON(t *testing.T) {
	for in, want := range map[string]bool{
		`{"resourceSpans":[]}`: true,
		" \t\r\n{}":            true,
		"":                     false,
		"\x0a\x00":             false, // resource_spans, empty
		"[{}]":                 false,
		" x{":                  false,
	} {
		if got := looksJSON([]byte(in)); got != want {
			t.Errorf("looksJSON(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestCommittable: per partition, the offsets up to the first record not
// stored; a partition whose first record is not stored commits nothing.
func TestCommittable(t *testing.T) {
	rec := func(topic string, p int32, off int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: p, Offset: off}
	}
	recs := []*kgo.Record{
		rec("a", 0, 10), rec("a", 1, 5), rec("a", 0, 11), rec("b", 0, 1),
		rec("a", 0, 12), rec("a", 1, 6), rec("a", 0, 13), rec("b", 0, 2),
	}
	done := []bool{
		true, false, true, true,
		false, true, true, true,
	}
	var got []string
	for _, r := range committable(recs, done) {
		got = append(got, fmt.Sprintf("%s/%d@%d", r.Topic, r.Partition, r.Offset))
	}
	// a/0: 10, 11 stored, 12 not: commit through 11 (13 is read again).
	// a/1: 5 not stored: nothing. b/0: 1, 2 stored: through 2.
	if fmt.Sprint(got) != "[a/0@11 b/0@2]" {
		t.Errorf("committable = %v, want [a/0@11 b/0@2]", got)
	}
	if len(committable(nil, nil)) != 0 {
		t.Error("committable of nothing is not empty")
	}
}
