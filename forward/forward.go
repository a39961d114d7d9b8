// Package forward sends the records of the disk log (storage/disk) to any
// number of OTLP destinations, each at its own pace, nothing lost when one
// is down: the log is the buffer, shared and immutable, and each
// destination reads it through its own durable cursor (a disk.Consumer per
// signal, named CursorPrefix+name), the queue per destination over shared
// data that the OTLP proposal's "Multi-Destination Exporting" asks for.
//
// Delivery is at least once. A cursor is committed only past records the
// destination acknowledged (or that were dead-lettered), in log order
// (Window), as soon as that run advances; a record counts against the
// destination's in-flight window (Destination.InFlight) from when it is
// read until a commit covers it, so after a crash or restart a
// destination is sent again at most its in-flight window, acknowledged
// or not.
//
// Failures are never a reason to skip a record silently:
//   - retryable ones (OTLP v1.11 "Failures": UNAVAILABLE, 429, 503, a
//     transport error, ...) are retried for as long as it takes, after the
//     destination's RetryInfo or Retry-After (both of its forms), with
//     exponential backoff and jitter otherwise (otlpclient's retry loop);
//   - a refusal of the client rather than the data (UNAUTHENTICATED, 401,
//     404, ...; otlpclient.RefusesClient) puts the destination in state
//     failing and retries the same record every Backoff.Max: the operator
//     must fix the credentials or the URL, and nothing is skipped meanwhile;
//   - a refusal of the data (INVALID_ARGUMENT, 400, a record over the
//     receiver's size limit) or a partial success writes the record to the
//     destination's dead-letter store (DeadLetterDir), counted and logged,
//     which `otlp-lite export -data-dir DIR` reads; then forwarding goes on.
//     The store is bounded (Options.DeadLetter, package deadletter, the
//     bound the Kafka source's dead letters have too): a destination that
//     refuses everything deletes its oldest letters, never fills the disk.
//
// The verdict on each failure is otlpclient.Classify's, the one
// classification of delivery errors; the retry loop is otlpclient's.
//
// Forwarding refuses to start unless retention holds the log for its
// cursors (Options.Store, opened with disk.Options.HoldPrefix =
// CursorPrefix): without the hold, retention would delete records before
// they are forwarded and nobody would know. A reader that accepts gaps
// (replay reads a log a serve elsewhere keeps) says so with
// Options.Unheld; gaps are then reported (Stats, Event Gap), never silent.
//
// `otlp-lite replay` is forwarding with one destination and a named cursor
// (Destination.Cursor, or none: Destination.NoCursor), run until caught up
// (Options.Once) and stopped by a destination that refuses the client
// (Options.StopOnRefusal); what it prints comes from Options.Observe and
// Forwarder.Stats.
//
// Only an answer that parses as the protocol's success is a delivery
// (otlpclient): a garbage body, a stalled stream or call (the
// destination's timeout=, streams included) are failures, retried.
//
// The Collector's exporters differ here on purpose: they drop data a
// persistent queue cannot hold and data refused for good; the OTLP
// specification only says which failures may be retried, so keeping the
// refused record is our choice, made so that nothing disappears unnoticed.
package forward

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/internal/wait"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/deadletter"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// CursorPrefix begins the name of every forwarding cursor: the store's
// disk.Options.HoldPrefix, so that retention keeps what a destination has
// not received.
const CursorPrefix = "forward."

// CursorName is the name of destination name's cursors (one per signal,
// under DATA/cursors/SIGNAL/).
func CursorName(name string) string { return CursorPrefix + name }

// deadLetterPatience is how long forwarding retries a dead letter its store
// refuses (a full disk, a failing one) before it counts the record lost and
// moves on: a minute outlasts a passing failure, while the cursor it holds
// keeps retention from freeing the log's segments (see lane.deadLetter).
const deadLetterPatience = time.Minute

// DeadLetterDir is where destination name's dead letters are stored: a
// disk store of its own, which `otlp-lite export -data-dir` reads.
func DeadLetterDir(dataDir, name string) string {
	return filepath.Join(dataDir, "forward", name, "dead-letter")
}

// Timing of the forwarding loop.
const (
	// pollEvery is how often a destination that caught up looks for new
	// records: the forwarding latency added to an idle log.
	pollEvery = 100 * time.Millisecond
	// stopGrace is what Close (or a lane stopped by StopOnRefusal) gives
	// records in flight to a destination that is up to be acknowledged,
	// so that a restart need not resend them, and short enough that a
	// stop does not hang; a destination backing off or failing gets none
	// (lane.run).
	stopGrace = 2 * time.Second
)

// State is a destination's condition.
type State int32

const (
	// Up: the last record was delivered (or there was nothing to send).
	Up State = iota
	// BackingOff: the destination answered with a retryable failure or
	// could not be reached; records are retried.
	BackingOff
	// Failing: the destination refuses the client (credentials, URL):
	// the same record is retried every Backoff.Max until it is fixed.
	Failing
)

var stateNames = [...]string{Up: "up", BackingOff: "backing_off", Failing: "failing"}

func (s State) String() string { return stateNames[s] }

// Options configure a Forwarder.
type Options struct {
	// DataDir is the store's data directory.
	DataDir string
	// Store is the open store of DataDir, for the lag metrics (read from
	// memory). It must have been opened with HoldPrefix: CursorPrefix for
	// retention to keep what destinations have not received.
	Store *disk.Store
	// Metrics receives the otlplite_forward_* metrics; nil registers none.
	Metrics *metrics.Set
	// Logger receives dead letters, state changes and errors; nil
	// discards them.
	Logger *slog.Logger
	// DeadLetter bounds each destination's dead-letter store
	// (DeadLetterDir): past its size or age the oldest letters are
	// deleted. Zero fields mean no limit.
	DeadLetter deadletter.Bound
	// Unheld accepts that Store does not hold retention for the cursors
	// (or that there is no Store): records retention deletes before they
	// are forwarded are then only reported, as gaps (Stats, Event Gap).
	// Without it New refuses to start, so that nobody loses data by
	// leaving the hold out.
	Unheld bool
	// Once makes each signal stop at the end of the log as it finds it,
	// once every record read is finished (acknowledged, dead-lettered or
	// skipped), instead of following the log: Done is closed when every
	// signal has. What replay does without -follow.
	Once bool
	// StopOnRefusal makes a signal stop, the record not skipped, when the
	// destination refuses the client (otlpclient.RefusedClient) instead
	// of retrying it every Backoff.Max: for a run nobody watches over,
	// such as replay. Stats.Err is then a *RefusedError.
	StopOnRefusal bool
	// LazyDeadLetters opens a destination's dead-letter store at its first
	// dead letter instead of in New: a one-shot run that refuses nothing
	// writes nothing, and one-shot runs on the same directory do not
	// contend for the store's lock (replay). An error opening it is then a
	// dead letter that cannot be written (retried, then counted lost).
	LazyDeadLetters bool
	// Observe, if not nil, is told what happens to each record (Event).
	// It is called from many goroutines and must not block.
	Observe func(Event)
	// NoIdempotencyKeys sends records without idempotency keys (keys.go):
	// by default each record carries a key derived from the log's
	// identity (disk.LogID of DataDir, created if the directory has none)
	// and its position, so that a destination keeping a window of keys
	// stores a record once however often it is resent. If the identity
	// cannot be had (a read-only directory that has none), records are
	// sent without keys and New logs why.
	NoIdempotencyKeys bool
}

// EventKind is what happened to a record.
type EventKind int

const (
	// Delivered: the destination acknowledged the record (a partial
	// success too: the record is then also dead-lettered).
	Delivered EventKind = iota + 1
	// Retried: an attempt failed and will be retried (Err).
	Retried
	// RefusedData: the destination refused the record for good (Err); it
	// is dead-lettered.
	RefusedData
	// RefusedClient: the destination refused the client, not the record
	// (Err): the record is retried (or the signal stops: StopOnRefusal).
	RefusedClient
	// Damaged: a damaged region of the log was skipped (Err).
	Damaged
	// Gap: retention deleted records before they were read (Err is a
	// *disk.GapError).
	Gap
)

// Event is what happened to one record (or region of the log).
type Event struct {
	Kind        EventKind
	Destination string
	Signal      storage.Signal
	// Record is where the record is in the log, "segment:offset".
	Record string
	// Bytes and Items are the record's size and its items.
	Bytes, Items int
	// Latency (Delivered) is from its first attempt to its
	// acknowledgement.
	Latency time.Duration
	Err     error
}

// RefusedError is why a signal stopped under Options.StopOnRefusal: the
// destination refused the client on the record at Record, as it would
// refuse every record; nothing was skipped.
type RefusedError struct {
	Record string
	Err    error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the destination refused the record at %s as it would refuse every record (%v); nothing was skipped", e.Record, e.Err)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Stats are one destination's progress on one signal.
type Stats struct {
	Destination string
	Signal      storage.Signal
	// Sent records were acknowledged, with Items items (minus the
	// RejectedItems that partial successes rejected).
	Sent, Items, RejectedItems int64
	// Failed records were refused for good, DeadLettered written to the
	// dead-letter store, Lost neither delivered nor dead-lettered.
	Failed, DeadLettered, Lost int64
	Retries                    int64
	// Damaged regions of the log were skipped.
	Damaged int64
	// Gaps retention made before the records were read, GapRecords the
	// records in them, UnknownGaps how many gaps are of unknown size.
	Gaps, GapRecords, UnknownGaps int64
	// Unfinished records were read and are neither acknowledged nor
	// dead-lettered: after Close, what the next run sends again.
	Unfinished int
	// LastError keeps records from being delivered now; nil if nothing.
	LastError error
	// Err is why the signal stopped before the end (a *RefusedError), or
	// a failure to commit its cursor at the end; nil otherwise.
	Err error
}

// Forwarder forwards the log to its destinations until Close.
type Forwarder struct {
	opts   Options
	logID  string // the log's identity, for keys; empty: none
	dests  []*dest
	done   chan struct{}   // closed when every lane has ended
	ctx    context.Context // reading: ends at Close
	stop   context.CancelFunc
	sendCx context.Context // sending: ends stopGrace after Close
	kill   context.CancelFunc
	wg     sync.WaitGroup
}

type dest struct {
	d    Destination
	sink storage.Sink // for the Sink protocol
	// dead is the dead-letter store (deadletter.Open), opened by New or,
	// with Options.LazyDeadLetters, by the first dead letter (deadStore).
	deadMu sync.Mutex
	dead   storage.Sink
	lanes  []*lane
	log    *slog.Logger
}

// lane is one destination's forwarding of one signal.
type lane struct {
	f      *Forwarder
	source string // the records' idempotency keys begin with it (sourceID); empty: no keys
	dest   *dest
	sig    storage.Signal
	c      source
	win    *Window
	send   sender
	log    *slog.Logger
	// readCx ends at Close or when the lane stops (abort); sendCx
	// stopGrace after either.
	readCx   context.Context
	stopRead context.CancelFunc
	sendCx   context.Context
	kill     context.CancelFunc

	mu      sync.Mutex
	lastErr error // the failure behind the current state
	err     error // why the lane stopped (Stats.Err)

	gaps, gapRecords, unknownGaps atomic.Int64

	state                                                                       atomic.Int32
	sent, items, deadLettered, failed, rejectedItems, retries, damaged, commits *metrics.Counter
	lost                                                                        *metrics.Counter
	// work counts goroutines handling an outcome (dead letters, resends).
	work sync.WaitGroup
}

// source is what a lane reads: a durable cursor (*disk.Consumer), or a
// reader from the oldest record that commits nothing (Destination.NoCursor).
type source interface {
	Next() (disk.Record, error)
	Position() disk.Position
	Committed() disk.Position
	CommitTo(disk.Position) error
	Close() error
}

// uncommitted reads from the oldest record and keeps no progress.
type uncommitted struct {
	*disk.Reader
	pos disk.Position
}

func (u *uncommitted) Committed() disk.Position         { return u.pos }
func (u *uncommitted) CommitTo(pos disk.Position) error { u.pos = pos; return nil }

// New opens each destination's cursors (creating them at the
// destination's Start position if new) and dead-letter store, and starts
// forwarding. It refuses to start if opts.Store does not hold retention
// for a cursor (disk.Store.Holds) unless opts.Unheld.
func New(opts Options, dests []Destination) (*Forwarder, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	set := opts.Metrics
	if set == nil {
		set = metrics.NewSet() // counted, never exposed
	}
	f := &Forwarder{opts: opts, done: make(chan struct{})}
	if !opts.NoIdempotencyKeys {
		id, err := disk.LogID(opts.DataDir)
		if err != nil {
			opts.Logger.Warn("records are forwarded without idempotency keys (at least once): the log has no identity", "err", err)
		}
		f.logID = id
	}
	f.ctx, f.stop = context.WithCancel(context.Background())
	f.sendCx, f.kill = context.WithCancel(context.Background())
	names := map[string]bool{}
	for _, d := range dests {
		if names[d.Name] {
			f.closeAll()
			return nil, fmt.Errorf("two destinations are called %q", d.Name)
		}
		names[d.Name] = true
		if err := checkHeld(opts, d); err != nil {
			f.closeAll()
			return nil, err
		}
		dd := &dest{d: d, log: opts.Logger.With("destination", d.Name)}
		f.dests = append(f.dests, dd)
		var err error
		if !opts.LazyDeadLetters {
			if _, err := dd.deadStore(opts); err != nil {
				f.closeAll()
				return nil, fmt.Errorf("cannot open the dead-letter store of destination %s: %w", d.Name, err)
			}
		}
		if d.OpenSink != nil {
			if dd.sink, err = d.OpenSink(dd.log); err != nil {
				f.closeAll()
				return nil, fmt.Errorf("cannot open destination %s: %w", d.Name, err)
			}
		}
		hc := httpClient(d)
		for _, sig := range d.Signals {
			var c source
			if d.NoCursor {
				c = &uncommitted{Reader: disk.NewGapReader(opts.DataDir, sig)}
			} else if c, err = disk.OpenConsumerAt(opts.DataDir, d.cursor(), sig, d.Start); err != nil {
				f.closeAll()
				return nil, fmt.Errorf("cannot open the %s cursor of destination %s: %w", sig, d.Name, err)
			}
			l := &lane{f: f, dest: dd, sig: sig, c: c, source: sourceID(f.logID, sig), win: NewBoundedWindow(c.Committed(), max(d.InFlight, d.Uncommitted)), log: dd.log.With("signal", sig.String())}
			l.readCx, l.stopRead = context.WithCancel(f.ctx)
			l.sendCx, l.kill = context.WithCancel(f.sendCx)
			// The sender first: the gauges that register creates read it.
			l.send = newSender(d, sig, hc, l)
			l.register(set)
			dd.lanes = append(dd.lanes, l)
		}
		dd.register(set)
	}
	for _, dd := range f.dests {
		for _, l := range dd.lanes {
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				l.run()
			}()
		}
		dd.log.Info("forwarding", "to", dd.d.String(), "protocol", dd.d.Protocol.String(), "signals", len(dd.lanes))
	}
	go func() { f.wg.Wait(); close(f.done) }()
	return f, nil
}

// checkHeld is New's check that retention holds the log for d's cursors.
func checkHeld(opts Options, d Destination) error {
	if d.NoCursor || opts.Unheld {
		return nil
	}
	if opts.Store == nil || !opts.Store.Holds(d.cursor()) {
		return fmt.Errorf("cannot forward to %s: the store does not hold retention for its cursor %q, so retention could delete records before they are forwarded, unnoticed: open the store with the disk.Options forward.Hold sets (HoldPrefix forward.CursorPrefix) and pass it as Options.Store, or set Options.Unheld to accept gaps", d.Name, d.cursor())
	}
	return nil
}

// Done is closed when every signal of every destination has stopped: at
// the end of the log with Options.Once, or after Close.
func (f *Forwarder) Done() <-chan struct{} { return f.done }

// Stats returns each destination's progress on each signal, in the order
// of the destinations and their Signals.
func (f *Forwarder) Stats() []Stats {
	var out []Stats
	for _, dd := range f.dests {
		for _, l := range dd.lanes {
			l.mu.Lock()
			s := Stats{Destination: dd.d.Name, Signal: l.sig, Err: l.err}
			l.mu.Unlock()
			s.Sent, s.Items, s.RejectedItems = int64(l.sent.Get()), int64(l.items.Get()), int64(l.rejectedItems.Get())
			s.Failed, s.DeadLettered, s.Lost = int64(l.failed.Get()), int64(l.deadLettered.Get()), int64(l.lost.Get())
			s.Retries, s.Damaged = int64(l.retries.Get()), int64(l.damaged.Get())
			s.Gaps, s.GapRecords, s.UnknownGaps = l.gaps.Load(), l.gapRecords.Load(), l.unknownGaps.Load()
			s.Unfinished = l.win.Unfinished()
			s.LastError = l.lastError()
			out = append(out, s)
		}
	}
	return out
}

// Close stops reading, gives the records in flight stopGrace to be
// acknowledged, commits every cursor and closes the files. Records still
// unacknowledged are sent again by the next run.
func (f *Forwarder) Close() error {
	f.stop()
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	t := time.NewTimer(stopGrace)
	select {
	case <-done:
	case <-t.C:
	}
	t.Stop()
	f.kill()
	<-done
	return f.closeAll()
}

func (f *Forwarder) closeAll() error {
	f.stop()
	f.kill()
	var errs []error
	for _, dd := range f.dests {
		for _, l := range dd.lanes {
			errs = append(errs, l.c.CommitTo(l.win.Position()), l.c.Close())
		}
		dd.deadMu.Lock()
		if dd.dead != nil {
			errs = append(errs, dd.dead.Close())
		}
		dd.deadMu.Unlock()
		if dd.sink != nil {
			errs = append(errs, dd.sink.Close())
		}
	}
	return errors.Join(errs...)
}

// Hold sets in o what a store that is forwarded from needs, before it is
// opened: HoldPrefix CursorPrefix, so that retention keeps what a
// destination has not received (New checks it: disk.Store.Holds), and, if
// set is not nil, OnLoss counting in set what the size limit deletes
// anyway (CountLoss).
func Hold(o *disk.Options, set *metrics.Set) {
	o.HoldPrefix = CursorPrefix
	if set != nil {
		o.OnLoss = CountLoss(set)
	}
}

// CountLoss returns the disk.Options.OnLoss of a store whose holding
// consumers are forwarding cursors: it counts, in set, the records
// retention's size limit deleted before a destination received them
// (otlplite_forward_lost_records_total). The store logs each loss. It
// counts when retention deletes, from the committed cursor, so a loss
// shows while the destination is still down; records already read then
// (the in-flight window and the rest of the open segment) are delivered
// all the same and may be counted too: the count errs high, never low.
func CountLoss(set *metrics.Set) func(consumer string, sig storage.Signal, records int64) {
	return func(consumer string, sig storage.Signal, records int64) {
		name := consumer[len(CursorPrefix):]
		set.GetOrCreateCounter(fmt.Sprintf(`otlplite_forward_lost_records_total{destination=%q,signal=%q}`, name, sig.String())).AddInt64(records)
	}
}

// run reads the lane's signal and sends it, until the Forwarder closes
// (or, with Options.Once, the end of the log; or the lane stops), then
// waits for the records in flight (until sendCx ends) and commits.
func (l *lane) run() {
	// The cursor is committed by a goroutine of its own, so that its two
	// fsyncs never hold up reading and sending, as soon as the finished
	// run advances: one commit at a time, advances during it coalesced
	// into the next, which takes the latest position (no timer: a crash
	// resends no more than the window holds). Consumer.CommitTo touches
	// only the committed position, which Next does not.
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		l.commitLoop(l.readCx)
	}()
	l.read(l.readCx)
	if l.readCx.Err() != nil && l.currentState() != Up {
		// Stopped while the destination backs off or refuses: what is
		// in flight waits for a retry, not for an acknowledgement, and
		// stopGrace would only delay the stop. The next run sends it.
		l.kill()
	}
	l.send.close()
	l.work.Wait()
	l.stopRead()
	<-committed
	if err := l.c.CommitTo(l.win.Position()); err != nil {
		l.log.Error("cannot commit the forwarding cursor", "err", err)
		l.fail(err)
	}
}

// read reads records and hands them to the sender until ctx ends, or the
// end of the log with Options.Once.
func (l *lane) read(ctx context.Context) {
	for ctx.Err() == nil {
		rec, err := l.c.Next()
		if err == io.EOF {
			if l.f.opts.Once {
				l.drain(ctx)
				return
			}
			wait.For(ctx, pollEvery)
			continue
		}
		if errors.Is(err, disk.ErrCorrupt) {
			l.damaged.Inc()
			l.log.Error("skipped damaged data in the log", "err", err)
			l.observe(Event{Kind: Damaged, Err: err})
			if l.win.Room(ctx) != nil {
				return
			}
			l.win.Finish(l.win.Add(l.c.Position(), time.Time{}))
			continue
		}
		if g, ok := errors.AsType[*disk.GapError](err); ok || errors.Is(err, disk.ErrGap) {
			// Retention deleted records before this destination got
			// them (-storage-max-bytes beat the cursor's hold, or a
			// reader without a hold fell behind). Retention counts them
			// once where it deletes them (CountLoss,
			// otlplite_forward_lost_records_total); here they are
			// reported (Stats, Event Gap) and the cursor moves past the
			// gap, at once, like damage.
			l.log.Error("records deleted by retention before they were forwarded", "err", err)
			l.gaps.Add(1)
			if g != nil && g.Records >= 0 {
				l.gapRecords.Add(g.Records)
			} else {
				l.unknownGaps.Add(1)
			}
			l.observe(Event{Kind: Gap, Err: err})
			if l.win.Room(ctx) != nil {
				return
			}
			l.win.Finish(l.win.Add(l.c.Position(), time.Time{}))
			continue
		}
		if err != nil {
			l.log.Error("cannot read the log", "err", err)
			wait.For(ctx, l.dest.d.Backoff.Max)
			continue
		}
		if l.win.Room(ctx) != nil {
			return // stopped: the next run reads the record again
		}
		key, id := recordKey(l.source, rec.Segment, rec.Offset)
		r := &record{
			key:    key,
			id:     id,
			data:   bytes.Clone(rec.Data), // kept until acknowledged
			items:  rec.Items,
			tenant: rec.Tenant,
			where:  fmt.Sprintf("%s:%d", rec.Segment, rec.Offset),
			slot:   l.win.Add(l.c.Position(), rec.Time),
			sent:   time.Now(),
		}
		if err := l.send.send(ctx, r); err != nil {
			// Stopped before the record was taken: the next run sends it.
			return
		}
	}
}

// drain waits until every record read is finished, or ctx ends.
func (l *lane) drain(ctx context.Context) {
	for l.win.Unfinished() > 0 {
		select {
		case <-l.win.Idle():
		case <-ctx.Done():
			return
		}
	}
}

// abort stops the lane for err (Stats.Err): it reads no more, and gives
// the records in flight stopGrace.
func (l *lane) abort(err error) {
	l.fail(err)
	l.stopRead()
	time.AfterFunc(stopGrace, l.kill)
}

// fail records err as why the lane stopped, if it is the first.
func (l *lane) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
}

// observe reports e, completed with the lane's names, to Options.Observe.
func (l *lane) observe(e Event) {
	if l.f.opts.Observe == nil {
		return
	}
	e.Destination, e.Signal = l.dest.d.Name, l.sig
	l.f.opts.Observe(e)
}

// commitLoop commits the lane's cursor each time the window's finished
// run advances, until ctx ends; a failed commit is retried (the window
// stops taking records once it holds its limit, so nothing piles up
// uncommitted meanwhile).
func (l *lane) commitLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.win.Advanced():
		}
		for n := 1; ; n++ {
			pos, mark := l.win.ToCommit()
			moved := pos != l.c.Committed()
			err := l.c.CommitTo(pos)
			if err == nil {
				if moved {
					l.commits.Inc()
				}
				l.win.Committed(mark)
				break
			}
			l.log.Error("cannot commit the forwarding cursor; forwarding waits for it", "err", err)
			if !wait.For(ctx, l.dest.d.Backoff.Delay(n, 0)) {
				return
			}
		}
	}
}

// record is one record on its way to a destination.
type record struct {
	key     string // idempotency key (keys.go); empty: none
	id      uint64 // request id on a stream (keys.go); zero: the exporter's
	data    []byte
	items   int
	tenant  string // the tenant the receiver stored it for
	where   string // segment:offset, for logs
	slot    *Slot
	sent    time.Time // when it was first sent
	refused int       // times the destination refused the client on it
}

// ctx is parent carrying r's tenant (otlp.WithTenant): a dead letter and
// a Sink destination store it with the record, and Destination.TenantHeader
// sends it.
func (r *record) ctx(parent context.Context) context.Context {
	if r.tenant == "" {
		return parent
	}
	return otlp.WithTenant(parent, r.tenant)
}

// outcome handles what became of r: delivered, refused, or not delivered,
// as otlpclient.Classify says. It may be called from an exporter's
// goroutine, so what can block (a dead letter's fsync, a wait before
// resending) runs in a goroutine of its own.
func (l *lane) outcome(r *record, ps otlp.PartialSuccess, err error) {
	v := otlpclient.Classify(err)
	switch {
	case v == otlpclient.Delivered && ps.Rejected == 0:
		l.sent.Inc()
		l.items.Add(r.items)
		l.setState(Up, nil)
		l.observe(Event{Kind: Delivered, Record: r.where, Bytes: len(r.data), Items: r.items, Latency: time.Since(r.sent)})
		l.win.Finish(r.slot)
	case v == otlpclient.Delivered:
		// A partial success: the destination kept part of the record and
		// said what it dropped; the record is kept whole, since which
		// items were rejected is not said (OTLP v1.11 "Partial Success").
		// A destination cannot reject more items than the record has
		// (otlpclient refuses a negative count, and cuts the message).
		rejected := int(min(ps.Rejected, int64(r.items)))
		l.sent.Inc()
		l.items.Add(r.items - rejected)
		l.rejectedItems.Add(rejected)
		l.setState(Up, nil)
		l.observe(Event{Kind: Delivered, Record: r.where, Bytes: len(r.data), Items: r.items, Latency: time.Since(r.sent)})
		l.spawn(func() {
			l.deadLetter(r, fmt.Sprintf("partial success: %d items rejected: %s", ps.Rejected, ps.Message))
		})
	case v == otlpclient.RefusedClient:
		r.refused++
		l.setState(Failing, err)
		l.observe(Event{Kind: RefusedClient, Record: r.where, Bytes: len(r.data), Items: r.items, Err: err})
		if l.f.opts.StopOnRefusal {
			// The record stays unfinished: the cursor stops before it.
			l.log.Error("the destination refuses the client; stopping, nothing is skipped: check its URL, headers and credentials", "record", r.where, "err", err)
			l.abort(&RefusedError{Record: r.where, Err: err})
			return
		}
		l.log.Error("the destination refuses the client; retrying the same record, nothing is skipped: check its URL, headers and credentials",
			"record", r.where, "err", err)
		l.spawn(func() {
			if wait.For(l.sendCx, l.dest.d.Backoff.Delay(r.refused, l.dest.d.Backoff.Max)) {
				l.resend(r)
			}
		})
	case v == otlpclient.RefusedData:
		l.failed.Inc()
		l.observe(Event{Kind: RefusedData, Record: r.where, Bytes: len(r.data), Items: r.items, Err: err})
		l.spawn(func() { l.deadLetter(r, err.Error()) })
	default:
		// Not delivered: stopped, or a failure the exporter gave up on
		// without a verdict on the record. Never skipped: sent again
		// (after a wait) while the forwarder runs, by the next run
		// otherwise.
		if l.sendCx.Err() != nil {
			return
		}
		l.setState(BackingOff, err)
		l.spawn(func() {
			if wait.For(l.sendCx, l.dest.d.Backoff.Max) {
				l.resend(r)
			}
		})
	}
}

func (l *lane) spawn(fn func()) {
	l.work.Add(1)
	go func() {
		defer l.work.Done()
		fn()
	}()
}

func (l *lane) resend(r *record) {
	if err := l.send.send(l.sendCx, r); err != nil {
		return // stopped: the next run sends it
	}
}

// deadLetter stores r in the destination's dead-letter store and finishes
// it; while the store cannot take it (disk full), it retries, and the
// cursor waits.
func (l *lane) deadLetter(r *record, reason string) {
	start := time.Now()
	for n := 1; ; n++ {
		dead, err := l.dest.deadStore(l.f.opts)
		if err == nil {
			err = dead.Write(r.ctx(l.sendCx), l.sig, r.data, r.items)
		}
		if err == nil {
			break
		}
		if time.Since(start) >= deadLetterPatience {
			// The cursor cannot wait for ever: while it holds this
			// record, retention cannot free the segments behind it,
			// and a disk filled by them (no -storage-max-bytes) would
			// refuse every request until a restart. The destination
			// refused the record for good; it is lost, and counted so.
			l.lost.Inc()
			l.log.Error("a record the destination refused for good is lost: its dead letter could not be written", "record", r.where, "items", r.items, "reason", reason, "tried_for", time.Since(start).Round(time.Second).String(), "err", err)
			l.win.Finish(r.slot)
			return
		}
		l.log.Error("cannot write a dead letter; the cursor waits", "record", r.where, "err", err)
		if !wait.For(l.sendCx, l.dest.d.Backoff.Delay(n, 0)) {
			return
		}
	}
	l.deadLettered.Inc()
	l.log.Warn("record dead-lettered: the destination refused it for good",
		"record", r.where, "items", r.items, "reason", reason,
		"read_with", "otlp-lite export -data-dir "+DeadLetterDir(l.f.opts.DataDir, l.dest.d.Name)+" -signal "+l.sig.String())
	l.win.Finish(r.slot)
}

// deadStore returns the destination's dead-letter store, opening it if it
// is not open yet.
func (d *dest) deadStore(opts Options) (storage.Sink, error) {
	d.deadMu.Lock()
	defer d.deadMu.Unlock()
	if d.dead == nil {
		s, err := deadletter.Open(DeadLetterDir(opts.DataDir, d.d.Name), opts.DeadLetter, d.log)
		if err != nil {
			return nil, err
		}
		d.dead = s
	}
	return d.dead, nil
}

// setState records the lane's state; err is the failure that caused it.
func (l *lane) setState(s State, err error) {
	l.mu.Lock()
	l.lastErr = err
	l.mu.Unlock()
	old := State(l.state.Swap(int32(s)))
	if old != s && s != Up {
		l.log.Warn("destination state", "state", s.String(), "err", err)
	} else if old != s {
		l.log.Info("destination state", "state", s.String())
	}
}

// lastError is what keeps the lane's records from being delivered now:
// the failure behind its state, or the sender's; nil if nothing.
func (l *lane) lastError() error {
	l.mu.Lock()
	err := l.lastErr
	l.mu.Unlock()
	if err == nil && l.send != nil {
		err = l.send.holding()
	}
	return err
}

// httpClient is the destination's client: one connection per endpoint,
// shared by its signals, sending the destination's headers.
//
// Both kinds are otlpclient's, with its bounds against a misbehaving
// destination: response headers, HTTP/2 pings that replace a dead
// connection, no redirects.
func httpClient(d Destination) *http.Client {
	var c *http.Client
	if d.Protocol == HTTP {
		c = otlpclient.NewHTTP1Client(d.TLS, otlpclient.DialEndpoint(d.Endpoint, d.Dial))
		c.Transport.(*http.Transport).MaxIdleConnsPerHost = d.InFlight
	} else {
		c = otlpclient.NewHTTPClientDial(d.TLS, otlpclient.DialEndpoint(d.Endpoint, d.Dial))
	}
	return otlpclient.WithTenantHeader(otlpclient.WithHeader(c, d.Header), d.TenantHeader)
}
