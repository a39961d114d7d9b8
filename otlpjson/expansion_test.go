package otlpjson

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// maxMarshalGrowth bounds how many times its protobuf size the JSON form of
// a message is (Marshal): what `export -format json`, the Kafka encoding
// otlp_json and forwarding with encoding=json hold and write for one
// record, so that a record within the 64 MiB request limit is at most 640
// MiB of JSON. TestMarshalGrowth spells the largest growths found by
// walking the schema for the shortest fields with the longest keys: a
// span's three dropped counts (8 bytes of protobuf, 75 of JSON, 9.2x; a
// repeated scalar field counts once, the last occurrence winning), a log
// record's severity and dropped count, packed 64-bit integers (1 byte,
// "127",) and control characters in strings (\u0001). It fails if a
// change to the encoder or the schema grows one past the bound.
const maxMarshalGrowth = 10

// nest wraps payload in the length-delimited fields nums, innermost first.
func nest(payload []byte, nums ...byte) []byte {
	for _, num := range nums {
		payload = append(binary.AppendUvarint([]byte{num<<3 | 2}, uint64(len(payload))), payload...)
	}
	return payload
}

func TestMarshalGrowth(t *testing.T) {
	span := nest([]byte{10<<3 | 0, 1, 12<<3 | 0, 1, 14<<3 | 0, 1}, 2)          // droppedAttributes/Events/LinksCount
	event := nest([]byte{4<<3 | 0, 1}, 11)                                     // an event's droppedAttributesCount
	logRec := nest([]byte{2<<3 | 0, 1, 7<<3 | 0, 1}, 2)                        // severityNumber, droppedAttributesCount
	ctrl := nest(bytes.Repeat([]byte{1}, 100), 5)                              // a span name of control characters
	packed := append([]byte{7<<3 | 2, 100}, bytes.Repeat([]byte{127}, 100)...) // bucketCounts of an exponential histogram's buckets
	for _, tc := range []struct {
		name string
		t    MessageType
		pb   []byte
	}{
		{"dropped counts", TracesData, nest(bytes.Repeat(span, 30), 2, 1)},
		{"events", TracesData, nest(nest(bytes.Repeat(event, 60), 2), 2, 1)},
		{"log records", LogsData, nest(bytes.Repeat(logRec, 40), 2, 1)},
		{"control characters", TracesData, nest(nest(ctrl, 2), 2, 1)},
		{"packed uint64", MetricsData, nest(nest(nest(nest(nest(nest(packed, 2), 8), 1), 10), 2, 2), 1)},
	} {
		js, err := Marshal(nil, tc.t, tc.pb)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		growth := float64(len(js)) / float64(len(tc.pb))
		t.Logf("%s: %d bytes of protobuf, %d of JSON (%.1fx)", tc.name, len(tc.pb), len(js), growth)
		if growth > maxMarshalGrowth {
			t.Errorf("%s: JSON is %.1f times the protobuf, more than %d: %.200s", tc.name, growth, maxMarshalGrowth, js)
		}
	}
}
