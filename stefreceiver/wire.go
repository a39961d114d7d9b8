package stefreceiver

import (
	"errors"
	"fmt"
	"github.com/otlp-lite/otlp-lite/internal/pbappend"

	"github.com/VictoriaMetrics/easyproto"
)

// The STEFDestination messages (splunk/stef go/grpc/proto/destination.proto),
// read and written by hand: this package does not use the library's grpc
// module, which brings grpc-go.

// clientMessage is a STEFClientMessage: first_message (field 1, with its
// root_struct_name, field 1), stef_bytes (2), is_end_of_chunk (3).
type clientMessage struct {
	first      bool
	rootStruct string
	stefBytes  []byte
	endOfChunk bool
}

// maxRootStructName bounds the name a client's first message carries: our
// schema's root structs are "Metrics" and "Spans".
const maxRootStructName = 256

func parseClientMessage(b []byte, m *clientMessage) error {
	*m = clientMessage{}
	var fc easyproto.FieldContext
	for len(b) > 0 {
		var err error
		if b, err = fc.NextField(b); err != nil {
			return fmt.Errorf("cannot decode STEFClientMessage: %w", err)
		}
		switch fc.FieldNum {
		case 1:
			sub, ok := fc.MessageData()
			if !ok {
				return errors.New("cannot decode STEFClientMessage: first_message is not a message")
			}
			m.first = true
			var sc easyproto.FieldContext
			for len(sub) > 0 {
				if sub, err = sc.NextField(sub); err != nil {
					return fmt.Errorf("cannot decode STEFClientFirstMessage: %w", err)
				}
				if sc.FieldNum == 1 {
					s, ok := sc.String()
					if !ok || len(s) > maxRootStructName {
						return errors.New("cannot decode STEFClientFirstMessage: bad root_struct_name")
					}
					m.rootStruct = s
				}
			}
		case 2:
			v, ok := fc.Bytes()
			if !ok {
				return errors.New("cannot decode STEFClientMessage: stef_bytes is not bytes")
			}
			m.stefBytes = v
		case 3:
			v, ok := fc.Bool()
			if !ok {
				return errors.New("cannot decode STEFClientMessage: is_end_of_chunk is not a bool")
			}
			m.endOfChunk = v
		}
	}
	return nil
}

// appendCapabilities appends a STEFServerMessage with capabilities (field
// 1): dictionary_limits (1) {max_dict_bytes (2)}, schema (2).
func appendCapabilities(dst []byte, maxDictBytes uint64, schema []byte) []byte {
	var lim []byte
	if maxDictBytes > 0 {
		lim = pbappend.VarintField(lim, 2, maxDictBytes)
	}
	var caps []byte
	caps = pbappend.BytesField(caps, 1, lim)
	caps = pbappend.BytesField(caps, 2, schema)
	return pbappend.BytesField(dst, 1, caps)
}

// idRange is a STEFIDRange, both ends inclusive.
type idRange struct{ from, to uint64 }

// appendDataResponse appends a STEFServerMessage with response (field 2):
// ack_record_id (1), bad_data_record_id_ranges (2) {from_id 1, to_id 2}.
func appendDataResponse(dst []byte, ack uint64, bad []idRange) []byte {
	// Built on the stack: an acknowledgement per request allocates
	// nothing unless it reports many bad ranges.
	var small [64]byte
	resp := pbappend.VarintField(small[:0], 1, ack)
	for _, r := range bad {
		var rb [24]byte
		rr := pbappend.VarintField(rb[:0], 1, r.from)
		rr = pbappend.VarintField(rr, 2, r.to)
		resp = pbappend.BytesField(resp, 2, rr)
	}
	// A response with ack 0 and no ranges is still a present message.
	return pbappend.BytesField(dst, 2, resp)
}
