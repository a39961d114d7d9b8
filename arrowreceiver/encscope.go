//go:build otelarrow

package arrowreceiver

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/otlp-lite/otlp-lite/internal/pbappend"
)

// OTLP field numbers shared by the three signals: an export request's
// Resource{Spans,Logs,Metrics} (1), each's resource (1), scopes (2) and
// schema url (3), a Scope{Spans,Logs,Metrics}'s scope (1), items (2) and
// schema url (3).
const (
	fResourceItems = 1 // Export{Trace,Logs,Metrics}ServiceRequest

	fRIResource  = 1 // ResourceSpans, ResourceLogs, ResourceMetrics
	fRIScopes    = 2
	fRISchemaURL = 3

	fResAttrs   = 1 // Resource
	fResDropped = 2

	fSIScope     = 1 // ScopeSpans, ScopeLogs, ScopeMetrics
	fScopeItems  = 2
	fSISchemaURL = 3

	fScopeName    = 1 // InstrumentationScope
	fScopeVersion = 2
	fScopeAttrs   = 3
	fScopeDropped = 4
)

// scopeWalker writes the resources and scopes around a main record's rows,
// as otel-arrow's conversion reads them (pkg/otel/common/otlp resource.go,
// scope.go): the record is sorted by resource and scope, whose ids are
// delta-encoded in their struct columns; a new resource begins where the
// resource id changes, a new scope where the scope id does or a resource
// begins; their attributes are found by a running id (byDelta). A null
// resource or scope struct is one without fields.
type scopeWalker struct {
	res, scope               structCol
	resID, scopeID           u16Col
	resDropped, scopeDropped u32Col
	resSchemaURL, schemaURL  strCol
	scopeName, scopeVersion  strCol
	resAttrs, scopeAttrs     *attrTable
	limit                    int
	started                  bool
	riAt, siAt               int
	riURL, siURL             string
}

func newScopeWalker(rec arrow.Record, resAttrs, scopeAttrs *attrTable, limit int) (*scopeWalker, error) {
	w := &scopeWalker{resAttrs: resAttrs, scopeAttrs: scopeAttrs, limit: limit, riAt: -1, siAt: -1}
	r := resolver{f: recordFields(rec)}
	w.res = r.strct("resource")
	w.scope = r.strct("scope")
	w.schemaURL = r.str("schema_url")
	if r.err != nil {
		return nil, r.err
	}
	rr := resolver{f: structFields(w.res.a)}
	w.resID = rr.u16("id")
	w.resDropped = rr.u32("dropped_attributes_count")
	w.resSchemaURL = rr.str("schema_url")
	if rr.err != nil {
		return nil, rr.err
	}
	sr := resolver{f: structFields(w.scope.a)}
	w.scopeID = sr.u16("id")
	w.scopeName = sr.str("name")
	w.scopeVersion = sr.str("version")
	w.scopeDropped = sr.u32("dropped_attributes_count")
	return w, sr.err
}

func (w *scopeWalker) closeScope(b []byte) []byte {
	if w.siAt >= 0 {
		b = pbappend.StringNonEmpty(b, fSISchemaURL, w.siURL)
		b = pbappend.CloseLen(b, w.siAt)
		w.siAt = -1
	}
	return b
}

// end closes the open scope and resource.
func (w *scopeWalker) end(b []byte) []byte {
	b = w.closeScope(b)
	if w.riAt >= 0 {
		b = pbappend.StringNonEmpty(b, fRISchemaURL, w.riURL)
		b = pbappend.CloseLen(b, w.riAt)
		w.riAt = -1
	}
	return b
}

// begin opens the resource and scope of row where they change; the row's
// item is then written as field fScopeItems of the open scope.
func (w *scopeWalker) begin(b []byte, row int) ([]byte, error) {
	var err error
	resPresent := w.res.present(row)
	var resDelta uint16
	if resPresent {
		resDelta = w.resID.at(row)
	}
	newRes := !w.started || resDelta != 0
	w.started = true
	if newRes {
		b = w.end(b)
		b, w.riAt = pbappend.OpenLen(b, fResourceItems)
		var at int
		b, at = pbappend.OpenLen(b, fRIResource)
		w.riURL = ""
		if resPresent {
			w.riURL = w.resSchemaURL.at(row)
			if w.resID.a != nil {
				if b, err = w.resAttrs.appendAttrs(b, fResAttrs, w.resAttrs.byDelta(uint32(resDelta)), w.limit); err != nil {
					return b, err
				}
			}
			b = pbappend.VarintNonZero(b, fResDropped, uint64(w.resDropped.at(row)))
		}
		b = pbappend.CloseLen(b, at)
	}
	scopePresent := w.scope.present(row)
	var scopeDelta uint16
	if scopePresent {
		scopeDelta = w.scopeID.at(row)
	}
	if newRes || scopeDelta != 0 {
		b = w.closeScope(b)
		b, w.siAt = pbappend.OpenLen(b, fRIScopes)
		var at int
		b, at = pbappend.OpenLen(b, fSIScope)
		if scopePresent {
			b = pbappend.StringNonEmpty(b, fScopeName, w.scopeName.at(row))
			b = pbappend.StringNonEmpty(b, fScopeVersion, w.scopeVersion.at(row))
			if w.scopeID.a != nil {
				if b, err = w.scopeAttrs.appendAttrs(b, fScopeAttrs, w.scopeAttrs.byDelta(uint32(scopeDelta)), w.limit); err != nil {
					return b, err
				}
			}
			b = pbappend.VarintNonZero(b, fScopeDropped, uint64(w.scopeDropped.at(row)))
		}
		b = pbappend.CloseLen(b, at)
		w.siURL = w.schemaURL.at(row)
	}
	return b, nil
}
