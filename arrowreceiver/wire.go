//go:build otelarrow

package arrowreceiver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/VictoriaMetrics/easyproto"
	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"

	"github.com/otlp-lite/otlp-lite/internal/pbappend"
)

// The messages of opentelemetry/proto/experimental/arrow/v1/arrow_service.proto,
// read and written by hand (easyproto): a batch is decoded into a
// BatchArrowRecords whose payloads are reused from one batch to the next
// and whose bytes alias the message read.

// maxPayloads bounds the payloads of one batch: a batch has one per
// payload type it carries (at most 16 for metrics: the main record and its
// attributes, data points and exemplars), so a thousand is far beyond any
// producer's and bounds the per-payload work a message can ask for.
const maxPayloads = 1024

// maxSchemaID bounds a payload's schema id: otel-arrow's producer writes a
// short digest of the schema (its fields' names and types, abbreviated).
const maxSchemaID = 4096

// batch is a decoded BatchArrowRecords and its reused payloads.
type batch struct {
	bar arrowpb.BatchArrowRecords
	// pool holds every payload made so far, reused by later batches.
	pool []*arrowpb.ArrowPayload
}

// parseBatch decodes a BatchArrowRecords (batch_id 1, arrow_payloads 2,
// headers 3) into b. The payloads' bytes and schema ids alias msg.
func parseBatch(msg []byte, b *batch) error {
	b.bar.BatchId, b.bar.Headers = 0, nil
	n := 0
	var fc easyproto.FieldContext
	for len(msg) > 0 {
		var err error
		if msg, err = fc.NextField(msg); err != nil {
			return fmt.Errorf("cannot decode BatchArrowRecords: %w", err)
		}
		switch fc.FieldNum {
		case 1:
			v, ok := fc.Int64()
			if !ok {
				return errors.New("cannot decode BatchArrowRecords: batch_id is not a varint")
			}
			b.bar.BatchId = v
		case 2:
			sub, ok := fc.MessageData()
			if !ok {
				return errors.New("cannot decode BatchArrowRecords: arrow_payloads is not a message")
			}
			if n == maxPayloads {
				return fmt.Errorf("cannot decode BatchArrowRecords: more than %d arrow_payloads", maxPayloads)
			}
			if n == len(b.pool) {
				b.pool = append(b.pool, new(arrowpb.ArrowPayload))
			}
			p := b.pool[n]
			p.SchemaId, p.Type, p.Record = "", 0, nil
			n++
			if err := parsePayload(sub, p); err != nil {
				return err
			}
		case 3:
			v, ok := fc.Bytes()
			if !ok {
				return errors.New("cannot decode BatchArrowRecords: headers is not bytes")
			}
			b.bar.Headers = v
		}
	}
	b.bar.ArrowPayloads = b.pool[:n]
	return nil
}

// parsePayload decodes an ArrowPayload (schema_id 1, type 2, record 3).
func parsePayload(msg []byte, p *arrowpb.ArrowPayload) error {
	var fc easyproto.FieldContext
	for len(msg) > 0 {
		var err error
		if msg, err = fc.NextField(msg); err != nil {
			return fmt.Errorf("cannot decode ArrowPayload: %w", err)
		}
		switch fc.FieldNum {
		case 1:
			v, ok := fc.String()
			if !ok || len(v) > maxSchemaID {
				return fmt.Errorf("cannot decode ArrowPayload: schema_id is not a string of at most %d bytes", maxSchemaID)
			}
			p.SchemaId = v
		case 2:
			v, ok := fc.Int32()
			if !ok {
				return errors.New("cannot decode ArrowPayload: type is not a varint")
			}
			p.Type = arrowpb.ArrowPayloadType(v)
		case 3:
			v, ok := fc.Bytes()
			if !ok {
				return errors.New("cannot decode ArrowPayload: record is not bytes")
			}
			p.Record = v
		}
	}
	return nil
}

// appendBatchStatus appends a BatchStatus (batch_id 1, status_code 2,
// status_message 3) to dst.
func appendBatchStatus(dst []byte, id int64, code uint32, msg string) []byte {
	dst = pbappend.VarintNonZero(dst, 1, uint64(id))
	dst = pbappend.VarintNonZero(dst, 2, uint64(code))
	return pbappend.StringNonEmpty(dst, 3, msg)
}

// cloneKey returns s for keeping (a map key outliving the message).
func cloneKey(s string) string { return strings.Clone(s) }
