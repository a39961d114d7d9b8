//go:build otelarrow

package arrowreceiver

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	common "github.com/open-telemetry/otel-arrow/go/pkg/otel/common/arrow"

	"github.com/otlp-lite/otlp-lite/ingest"
)

// chargeStep is the granularity of a stream's state charge: the
// allocator takes the admission lock once per step of Arrow buffers, not
// once per buffer (a batch allocates thousands).
const chargeStep = ingest.StateChargeStep

// budgetAllocator is a stream's Arrow allocator: otel-arrow's
// LimitedAllocator (memory_limit_mib: at most limit bytes in use, a
// common.LimitError beyond, which its callers recognise as
// arrow_record.ErrConsumerMemoryLimit) whose bytes are also charged to the
// admission budget as they are allocated (an ingest.StateCharge, in
// chargeStep steps) and returned as they are freed, so that the
// dictionaries and buffers a stream holds cost what they are and a
// stream that finds no room is refused (errNoRoom) before it allocates.
// Allocate panics with either error, as LimitedAllocator does; the IPC
// reader recovers it into its error.
//
// Not safe for concurrent use: one stream's decoder uses it.
type budgetAllocator struct {
	mem    memory.Allocator
	charge *ingest.StateCharge
	limit  uint64
	inuse  uint64
	peak   uint64
	// scratch is the encoders' indexes kept between batches (scratch.go),
	// charged with the buffers but not counted against limit (they are
	// bounded by maxScratch).
	scratch uint64
}

// errNoRoom is the allocator's refusal when the admission budget has no
// room for the stream's state.
type errNoRoom struct{ want int64 }

func (e errNoRoom) Error() string {
	return fmt.Sprintf("no room in the admission budget for %d more bytes of Arrow stream state", e.want)
}

// newBudgetAllocator charges what it allocates to the admission budget's
// stream state and to the tenant of ctx's max_budget_share
// (ingest.Pipeline.NewStateCharge).
func newBudgetAllocator(ctx context.Context, p *ingest.Pipeline, limit uint64) *budgetAllocator {
	return &budgetAllocator{mem: memory.NewGoAllocator(), charge: p.NewStateCharge(ctx), limit: limit}
}

var _ memory.Allocator = (*budgetAllocator)(nil)

func (a *budgetAllocator) Allocate(size int) []byte {
	a.reserve(uint64(size))
	b := a.mem.Allocate(size)
	a.grew(uint64(size))
	return b
}

func (a *budgetAllocator) Reallocate(size int, b []byte) []byte {
	if size > len(b) {
		a.reserve(uint64(size - len(b)))
	}
	out := a.mem.Reallocate(size, b)
	if size > len(b) {
		a.grew(uint64(size - len(b)))
	} else {
		a.inuse -= uint64(len(b) - size)
		a.shrink()
	}
	return out
}

func (a *budgetAllocator) Free(b []byte) {
	a.mem.Free(b)
	a.inuse -= uint64(len(b))
	a.shrink()
}

// reserve checks that n more bytes fit the stream's limit and are
// charged, or panics.
func (a *budgetAllocator) reserve(n uint64) {
	if a.inuse+n > a.limit || a.inuse+n < a.inuse {
		panic(common.LimitError{Request: n, Inuse: a.inuse, Limit: a.limit})
	}
	if !a.charge.Resize(int64(a.inuse + n + a.scratch)) {
		panic(errNoRoom{want: int64(a.inuse+n+a.scratch) - a.charge.Held()})
	}
}

func (a *budgetAllocator) grew(n uint64) {
	a.inuse += n
	a.peak = max(a.peak, a.inuse)
}

// shrink returns the charge above what is in use (StateCharge keeps one
// step of slack).
func (a *budgetAllocator) shrink() { a.charge.Resize(int64(a.inuse + a.scratch)) }

// holdScratch charges n bytes of the encoders' kept indexes (in place of
// what was charged for them), or reports false when the admission budget
// has no room.
func (a *budgetAllocator) holdScratch(n uint64) bool {
	if !a.charge.Resize(int64(a.inuse + n)) {
		return false
	}
	a.scratch = n
	return true
}

// release returns the whole charge (the stream ended; its readers are
// released or dropped).
func (a *budgetAllocator) release() { a.charge.Release() }
