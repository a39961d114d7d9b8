// Package connstate is what the server and the handler share about one
// client connection: whether it has presented valid credentials, when its
// requests last sent body bytes, and a way for the handler to ask the
// server to shed the quietest connection when its process-wide stream
// bound is full.
//
// The server (package server) creates one Conn per accepted connection and
// puts it in the connection's context (ConnContext); the handler finds it
// in every request's context. The dependencies stay one way — server and
// handler both import this package, neither imports the other — and a
// handler served by another server simply finds no Conn (every method is
// safe on a nil *Conn and does nothing).
package connstate

import (
	"context"
	"sync/atomic"
	"time"
)

// Shedder closes the connection that costs the most while doing the least
// (see server's connTracker.ShedQuiet), other than except, and reports
// whether it closed one.
type Shedder interface {
	ShedQuiet(except *Conn) bool
}

// Conn is the shared state of one connection. Its methods may be called
// concurrently.
type Conn struct {
	// lastData is when body bytes of one of its requests last arrived,
	// or when it was accepted (unix nanoseconds).
	lastData atomic.Int64
	// authenticated is set by the handler once a request on the
	// connection presented valid credentials (or needed none and was not
	// a health check): from then on it is not shed before tokenless ones.
	authenticated atomic.Bool
	// waiting counts its requests and streams waiting for a unit.
	waiting atomic.Int32
	// busy counts its requests the ingest pipeline is working on.
	busy atomic.Int32
	// units counts the units of the handler's stream bound its requests
	// and streams hold.
	units   atomic.Int32
	shedder Shedder
}

// New returns the state of a connection accepted at now; s is asked to
// shed connections when the handler's stream bound is full (nil: none).
func New(now time.Time, s Shedder) *Conn {
	c := &Conn{shedder: s}
	c.lastData.Store(now.UnixNano())
	return c
}

type key struct{}

// NewContext returns ctx carrying c.
func NewContext(ctx context.Context, c *Conn) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// FromContext returns the Conn in ctx, or nil.
func FromContext(ctx context.Context) *Conn {
	c, _ := ctx.Value(key{}).(*Conn)
	return c
}

// NoteData records that body bytes arrived now (unix nanoseconds).
func (c *Conn) NoteData(now int64) {
	if c != nil {
		c.lastData.Store(now)
	}
}

// LastData returns when body bytes last arrived on the connection (or when
// it was accepted), in unix nanoseconds.
func (c *Conn) LastData() int64 {
	if c == nil {
		return 0
	}
	return c.lastData.Load()
}

// SetAuthenticated marks the connection as having presented valid
// credentials.
func (c *Conn) SetAuthenticated() {
	if c != nil && !c.authenticated.Load() {
		c.authenticated.Store(true)
	}
}

// Authenticated reports whether SetAuthenticated was called.
func (c *Conn) Authenticated() bool { return c != nil && c.authenticated.Load() }

// AddWaiting adds n to the connection's requests and streams waiting for a
// unit of the handler's stream bound and returns the new count (n on a nil
// Conn, so that a handler without our server lets each wait).
func (c *Conn) AddWaiting(n int32) int32 {
	if c == nil {
		return n
	}
	return c.waiting.Add(n)
}

// AddBusy adds n to the connection's requests the ingest pipeline is
// working on. A connection with one is not quiet, whenever its client last
// sent: its request waited its turn and is being served, and shedding the
// connection would throw that work away and free nothing its client holds
// idle.
func (c *Conn) AddBusy(n int32) {
	if c != nil {
		c.busy.Add(n)
	}
}

// Busy reports whether the ingest pipeline is working on a request of the
// connection (AddBusy).
func (c *Conn) Busy() bool { return c != nil && c.busy.Load() > 0 }

// AddUnits adds n to the units of the handler's stream bound the
// connection's requests and streams hold.
func (c *Conn) AddUnits(n int32) {
	if c != nil {
		c.units.Add(n)
	}
}

// HoldsUnits reports whether the connection's requests or streams hold a
// unit of the handler's stream bound (AddUnits). Only such a connection is
// shed for a request waiting for a unit: shedding one whose requests all
// wait frees no unit, and throws away an honest client queuing its turn.
func (c *Conn) HoldsUnits() bool { return c != nil && c.units.Load() > 0 }

// ShedQuiet asks the server to shed its quietest connection other than c;
// false if there is no server to ask or nothing could be shed.
func (c *Conn) ShedQuiet() bool {
	if c == nil || c.shedder == nil {
		return false
	}
	return c.shedder.ShedQuiet(c)
}
