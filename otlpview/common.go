package otlpview

import (
	"errors"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// Resource is a view of a Resource and of the schema_url of the
// Resource{Spans,Metrics,Logs} holding it.
//
//	message Resource {
//	  repeated opentelemetry.proto.common.v1.KeyValue attributes = 1;
//	  uint32 dropped_attributes_count = 2;
//	  repeated opentelemetry.proto.common.v1.EntityRef entity_refs = 3;
//	}
type Resource struct {
	// Raw is the Resource's protobuf encoding (its occurrences merged),
	// for a store that keeps it as it came.
	Raw                    []byte
	Attributes             KeyValues
	DroppedAttributesCount uint32
	EntityRefs             EntityRefs
	// SchemaURL is the schema_url of the enclosing ResourceSpans,
	// ResourceMetrics or ResourceLogs.
	SchemaURL string
}

func (r *Resource) decode(src []byte) error {
	*r = Resource{
		Raw:        src,
		Attributes: KeyValues{src: src, field: otlppb.ResourceAttributes},
		EntityRefs: EntityRefs{src: src},
	}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		if fc.FieldNum == otlppb.ResourceDroppedAttributesCount {
			if n, ok := readUint32(&fc); ok {
				r.DroppedAttributesCount = n
			}
		}
	}
	return nil
}

// EntityRef is a view of an EntityRef ([Development] since OTLP 1.6.0).
//
//	message EntityRef {
//	  string schema_url = 1;
//	  string type = 2;
//	  repeated string id_keys = 3;
//	  repeated string description_keys = 4;
//	}
type EntityRef struct {
	SchemaURL       string
	Type            string
	IDKeys          Strings
	DescriptionKeys Strings
}

func (e *EntityRef) decode(src []byte) error {
	*e = EntityRef{
		IDKeys:          Strings{src: src, field: otlppb.EntityRefIDKeys},
		DescriptionKeys: Strings{src: src, field: otlppb.EntityRefDescriptionKeys},
	}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case otlppb.EntityRefSchemaURL:
			if s, ok := fc.String(); ok {
				e.SchemaURL = s
			}
		case otlppb.EntityRefType:
			if s, ok := fc.String(); ok {
				e.Type = s
			}
		}
	}
	return nil
}

// EntityRefs is the entity_refs field of a Resource, decoded lazily.
type EntityRefs struct {
	src []byte
}

// Iter returns an iterator over the entity references.
func (es EntityRefs) Iter() EntityRefIter {
	return EntityRefIter{rawIter: rawIter{src: es.src, field: otlppb.ResourceEntityRefs}}
}

// EntityRefIter iterates over EntityRefs.
type EntityRefIter struct {
	rawIter
	e EntityRef
}

// Next decodes the next entity reference.
func (it *EntityRefIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.e.decode(data), "entity_refs")
}

// EntityRef returns the current entity reference, valid until Next.
func (it *EntityRefIter) EntityRef() *EntityRef { return &it.e }

// Scope is a view of an InstrumentationScope and of the schema_url of the
// Scope{Spans,Metrics,Logs} holding it.
//
//	message InstrumentationScope {
//	  string name = 1;
//	  string version = 2;
//	  repeated KeyValue attributes = 3;
//	  uint32 dropped_attributes_count = 4;
//	}
type Scope struct {
	// Raw is the InstrumentationScope's protobuf encoding (its occurrences
	// merged), for a store that keeps it as it came.
	Raw                    []byte
	Name                   string
	Version                string
	Attributes             KeyValues
	DroppedAttributesCount uint32
	// SchemaURL is the schema_url of the enclosing ScopeSpans, ScopeMetrics
	// or ScopeLogs.
	SchemaURL string
}

func (s *Scope) decode(src []byte) error {
	*s = Scope{Raw: src, Attributes: KeyValues{src: src, field: otlppb.InstrumentationScopeAttributes}}
	var fc otlppb.Field
	for len(src) > 0 {
		var err error
		if src, err = fc.Read(src); err != nil {
			return err
		}
		switch fc.FieldNum {
		case otlppb.InstrumentationScopeName:
			if v, ok := fc.String(); ok {
				s.Name = v
			}
		case otlppb.InstrumentationScopeVersion:
			if v, ok := fc.String(); ok {
				s.Version = v
			}
		case otlppb.InstrumentationScopeDroppedAttributesCount:
			if n, ok := readUint32(&fc); ok {
				s.DroppedAttributesCount = n
			}
		}
	}
	return nil
}

// containers holds what the three decoders share: the Resource and Scope
// views handed to callbacks and the buffers that merge repeated
// occurrences of a singular message field (protobuf merges them, which for
// the encoded form is concatenation).
type containers struct {
	res      Resource
	scope    Scope
	resBuf   []byte
	scopeBuf []byte
	cbErr    error // the callback's error, while errCallback unwinds
}

// singular returns the merged payload of every occurrence of the
// length-delimited field num of src, and the value of the string field
// strNum (last wins). The first occurrence is returned without copying.
func singular(src []byte, num, strNum uint32, buf *[]byte) (msg []byte, str string, err error) {
	n := 0
	var fc otlppb.Field
	for len(src) > 0 {
		if src, err = fc.Read(src); err != nil {
			return nil, "", err
		}
		switch fc.FieldNum {
		case num:
			data, ok := fc.MessageData()
			if !ok {
				continue
			}
			switch n {
			case 0:
				msg = data
			case 1:
				*buf = append(append((*buf)[:0], msg...), data...)
				msg = *buf
			default:
				*buf = append(*buf, data...)
				msg = *buf
			}
			n++
		case strNum:
			if s, ok := fc.String(); ok {
				str = s
			}
		}
	}
	return msg, str, nil
}

// resourceHeader decodes the resource and schema_url of a
// Resource{Spans,Metrics,Logs}. They may follow the scopes on the wire, so
// this pass runs before the items are visited.
//
//	message ResourceSpans {
//	  opentelemetry.proto.resource.v1.Resource resource = 1;
//	  repeated ScopeSpans scope_spans = 2;
//	  string schema_url = 3;
//	}
func (c *containers) resourceHeader(src []byte) error {
	msg, schemaURL, err := singular(src, otlppb.ResourceSpansResource, otlppb.ResourceSpansSchemaURL, &c.resBuf)
	if err != nil {
		return err
	}
	if err := c.res.decode(msg); err != nil {
		return at(err, "resource", -1)
	}
	c.res.SchemaURL = schemaURL
	return nil
}

// scopeHeader decodes the scope and schema_url of a
// Scope{Spans,Metrics,Logs}.
//
//	message ScopeSpans {
//	  opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
//	  repeated Span spans = 2;
//	  string schema_url = 3;
//	}
func (c *containers) scopeHeader(src []byte) error {
	msg, schemaURL, err := singular(src, otlppb.ScopeSpansScope, otlppb.ScopeSpansSchemaURL, &c.scopeBuf)
	if err != nil {
		return err
	}
	if err := c.scope.decode(msg); err != nil {
		return at(err, "scope", -1)
	}
	c.scope.SchemaURL = schemaURL
	return nil
}

// nextMessage returns the payload of the next occurrence of the
// length-delimited field num of src and the rest of src; ok is false at the
// end of src. It is the loop step of every container level of Decode.
func nextMessage(fc *otlppb.Field, src []byte, num uint32) (data, tail []byte, ok bool, err error) {
	for len(src) > 0 {
		if src, err = fc.Read(src); err != nil {
			return nil, src, false, err
		}
		if fc.FieldNum != num {
			continue
		}
		if data, ok := fc.MessageData(); ok {
			return data, src, true, nil
		}
	}
	return nil, nil, false, nil
}

// itemView is the view of the items a Decode visits: *Span, *Metric or
// *LogRecord.
type itemView[T any] interface {
	*T
	decode(src []byte) error
}

// decodeRequest is the Decode of the three decoders: it calls fn for every
// item of src with its resource and scope, decoding each into item.
// names gives the field names used in error positions.
//
//	message ExportTraceServiceRequest {
//	  repeated opentelemetry.proto.trace.v1.ResourceSpans resource_spans = 1;
//	}
//
// ExportMetricsServiceRequest and ExportLogsServiceRequest have the same
// layout.
//
// The Decode methods that call it are kept out of line (go:noinline), so
// that this generic walk is instantiated, and its escape analysis made, in
// this package: inlined into a caller in another package, the walk made
// the caller's callback escape, two allocations per Decode
// (TestZeroAllocs, since the tests walk from internal/viewwalk).
func decodeRequest[T any, PT itemView[T]](c *containers, item PT, names *levelNames, src []byte, fn func(*Resource, *Scope, PT) error) error {
	var fc otlppb.Field
	for rs := 0; ; rs++ {
		data, tail, ok, err := nextMessage(&fc, src, otlppb.ExportTraceServiceRequestResourceSpans) // resource_spans, resource_metrics...
		if err != nil {
			return otlppb.ErrorAt(err, "", -1)
		}
		if !ok {
			return nil
		}
		src = tail
		if err := decodeResource(c, item, names, data, fn); err != nil {
			if err == errCallback {
				err, c.cbErr = c.cbErr, nil
				return err
			}
			return at(err, names[0], rs)
		}
	}
}

// decodeResource visits a Resource{Spans,Metrics,Logs} (layout at
// containers.resourceHeader).
func decodeResource[T any, PT itemView[T]](c *containers, item PT, names *levelNames, src []byte, fn func(*Resource, *Scope, PT) error) error {
	if err := c.resourceHeader(src); err != nil {
		return err
	}
	var fc otlppb.Field
	for ss := 0; ; ss++ {
		data, tail, ok, err := nextMessage(&fc, src, otlppb.ResourceSpansScopeSpans) // scope_spans, scope_metrics...
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		src = tail
		if err := decodeScope(c, item, names, data, fn); err != nil {
			return at(err, names[1], ss)
		}
	}
}

// decodeScope visits a Scope{Spans,Metrics,Logs} (layout at
// containers.scopeHeader).
func decodeScope[T any, PT itemView[T]](c *containers, item PT, names *levelNames, src []byte, fn func(*Resource, *Scope, PT) error) error {
	if err := c.scopeHeader(src); err != nil {
		return err
	}
	var fc otlppb.Field
	for i := 0; ; i++ {
		data, tail, ok, err := nextMessage(&fc, src, otlppb.ScopeSpansSpans) // spans, metrics, log_records
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		src = tail
		if err := item.decode(data); err != nil {
			return at(err, names[2], i)
		}
		if err := fn(&c.res, &c.scope, item); err != nil {
			c.cbErr = err
			return errCallback
		}
	}
}

// errCallback stands, on the way out of a Decode, for the error the
// callback returned; Decode returns that error itself, unwrapped, so that
// callers can compare it.
var errCallback = errors.New("callback error")
