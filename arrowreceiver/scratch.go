//go:build otelarrow

package arrowreceiver

// The encoders keep their indexes (slices sized by a batch's rows) from
// one batch to the next, so that a stream of batches allocates them once.
// What is kept is charged with the stream's state (budgetAllocator's
// holdScratch, beside its Arrow buffers), and kept only up to
// maxScratch: a stream whose batch made larger indexes drops them once
// the batch is done (the batch itself was charged rowCost a row, which
// covers them while it is decoded).

// maxScratch bounds the encoders' indexes a stream keeps between batches:
// enough for batches of a few thousand attributes, what an exporter
// sends, and small beside the stream's Arrow state.
const maxScratch = 256 << 10

// mapEntryCost is what a kept map's entry is counted (a Go map's entry of
// a string key: its slot, hash and overhead).
const mapEntryCost = 48

func (g *groups) bytes() int {
	return 4*cap(g.parent) + 4*cap(g.order) + 4*cap(g.off) + 8*cap(g.sorted) + cap(g.taken)
}

func (t *attrTable) bytes() int {
	return t.groups.bytes() + 4*cap(t.keyID) + cap(t.used) + 4*cap(t.last) +
		mapEntryCost*(t.keyIDsMax+t.seenMax)
}

func (e *tracesEncoder) bytes() int {
	n := e.events.bytes() + e.links.bytes() + 8*cap(e.evAttr) + 8*cap(e.lkAttr)
	for _, t := range []*attrTable{&e.resAttrs, &e.scopeAttrs, &e.spanAttrs, &e.eventAttrs, &e.linkAttrs} {
		n += t.bytes()
	}
	return n
}

func (e *logsEncoder) bytes() int {
	return e.resAttrs.bytes() + e.scopeAttrs.bytes() + e.logAttrs.bytes()
}

func (e *metricsEncoder) bytes() int {
	n := 0
	for _, t := range []*attrTable{&e.resAttrs, &e.scopeAttrs, &e.numAttrs, &e.sumAttrs, &e.histAttrs, &e.ehistAttrs, &e.numExAttrs, &e.histExAttrs, &e.ehExAttr} {
		n += t.bytes()
	}
	for _, t := range []*dpTable{&e.num, &e.sum, &e.hist, &e.ehist} {
		n += t.groups.bytes() + 8*cap(t.attrKey) + cap(t.exTake)
	}
	for _, t := range []*exTable{&e.numEx, &e.histEx, &e.ehistEx} {
		n += t.groups.bytes() + 8*cap(t.attr)
	}
	return n
}

// forget drops what the table read of a batch (its columns: references to
// the batch's records, and its map-valued attributes), keeping its
// indexes' memory.
func (t *attrTable) forget() {
	*t = attrTable{groups: t.groups, keyID: t.keyID, used: t.used, last: t.last,
		keyIDs: t.keyIDs, seen: t.seen, keyIDsMax: t.keyIDsMax, seenMax: t.seenMax}
}

func (t *dpTable) forget() {
	*t = dpTable{groups: t.groups, attrKey: t.attrKey, exTake: t.exTake}
}

func (t *exTable) forget() { *t = exTable{groups: t.groups, attr: t.attr} }

func (e *tracesEncoder) forget() {
	for _, t := range []*attrTable{&e.resAttrs, &e.scopeAttrs, &e.spanAttrs, &e.eventAttrs, &e.linkAttrs} {
		t.forget()
	}
}

func (e *logsEncoder) forget() {
	for _, t := range []*attrTable{&e.resAttrs, &e.scopeAttrs, &e.logAttrs} {
		t.forget()
	}
}

func (e *metricsEncoder) forget() {
	for _, t := range []*attrTable{&e.resAttrs, &e.scopeAttrs, &e.numAttrs, &e.sumAttrs, &e.histAttrs, &e.ehistAttrs, &e.numExAttrs, &e.histExAttrs, &e.ehExAttr} {
		t.forget()
	}
	for _, t := range []*dpTable{&e.num, &e.sum, &e.hist, &e.ehist} {
		t.forget()
	}
	for _, t := range []*exTable{&e.numEx, &e.histEx, &e.ehistEx} {
		t.forget()
	}
}

// keepScratch, once a batch is done, drops what the encoders read of it
// (references to its records) and charges the indexes they keep, or drops
// those too when they are more than maxScratch or the admission budget
// has no room for them.
func (d *decoder) keepScratch() {
	d.traces.forget()
	d.logs.forget()
	d.metrics.forget()
	n := d.traces.bytes() + d.logs.bytes() + d.metrics.bytes()
	if n > maxScratch || !d.alloc.holdScratch(uint64(n)) {
		d.traces, d.logs, d.metrics = tracesEncoder{}, logsEncoder{}, metricsEncoder{}
		d.alloc.holdScratch(0)
	}
}
