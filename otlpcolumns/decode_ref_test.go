package otlpcolumns

// walkRef is the decoder's walk as it was before the per-node tables
// (node.ops) and its frame (walkFrame): the reference the differential
// tests hold the walk to (FuzzDecodeSame, TestWalkSameAsRef).

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// stBytes and stString convert Decoder.st, a string since walk keeps it
// so, for walkRef, which reads a slice.
func stBytes(s string) []byte  { return unsafe.Slice(unsafe.StringData(s), len(s)) }
func stString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// walk rebuilds the fields of a message of node n from the structure and
// the columns. The output stays within d.want (dst's capacity covers it),
// so each write is a bounds check and a copy.
func (d *Decoder) walkRef(n *node, depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	var start uint64
	var bucket uint8
	parent := -1    // the ordinal of the parent span, when its start is known
	sameTrace := -1 // the kBack ordinal of the last span of its trace
	forward := -1   // the ordinal of the parent span, when it comes later
	// d.buf's capacity, as the old Decode's out had: d.out's is walk's
	// limit (at the top, the prefix of dst).
	st, out, lim := stBytes(d.st), d.buf[:len(d.out)], d.lim
	var err error
	run := -1   // where the run of n.series fields being rebuilt starts in out
	runIdx := 0 // which of n.series it is
loop:
	for {
		if run >= 0 && (len(st) == 0 || st[0] != n.series[runIdx]<<3|2) {
			// The run ends (a field of another number, or a tag of
			// more than a byte: the encoder's runs hold minimal tags
			// only if the message's do, and any other tag ends it).
			d.sets.add(out[run:])
			run = -1
		}
		if len(st) == 0 {
			if depth > 0 {
				err = errEnd
				break loop
			}
			break loop
		}
		var tag uint64
		k := 1
		if b := st[0]; b < 0x80 {
			if b == 0 {
				if depth == 0 {
					err = errTopEnd
					break loop
				}
				st = st[1:]
				break loop
			}
			if i := markerIndex(b); i >= 0 && n.series[i] != 0 {
				scol := n.seriesCol[i]
				v, m := uvarint(d.col(scol))
				if m <= 0 {
					err = errCut
					break loop
				}
				d.took(scol, d.col(scol)[m:])
				id := int64(d.sets.last[scol]) + int64(unzigzag(v))
				if id < 0 || id >= int64(len(d.sets.offs)) {
					err = errRef
					break loop
				}
				set := d.sets.get(int(id))
				if len(out)+len(set) > lim {
					if out, lim, err = d.moreRef(out, len(set)); err != nil {
						break loop
					}
				}
				out = append(out, set...)
				d.sets.last[scol] = int32(id + 1)
				if n.byCtx != nil && n.series[i] == n.ctxSet {
					bucket = d.sets.buckets[id]
				}
				st = st[1:]
				continue
			}
			tag = uint64(b)
			if run < 0 {
				if i := n.seriesIndex(b); i >= 0 {
					run, runIdx = len(out), i
				}
			}
		} else if tag, k = binary.Uvarint(st); k <= 0 || tag>>3 == 0 || tag>>3 > 1<<29-1 {
			err = errTag
			break loop
		}
		if len(out)+k > lim {
			if out, lim, err = d.moreRef(out, k); err != nil {
				break loop
			}
		}
		out = append(out, st[:k]...)
		st = st[k:]
		wt := uint8(tag & 7)
		num := tag >> 3
		kd, col, lcol := kOther, uint8(colOther), uint8(0)
		var child *node
		if num <= maxField {
			f := &n.f[num]
			if f.kind != kOther && wireOf[f.kind] == wt {
				kd, col, lcol, child = f.kind, f.col, f.lcol, f.child
				if f.spread {
					col += bucket
				}
			}
		}
		switch wt {
		case 0:
			c := d.col(col)
			m := varintLen(c)
			if m == 0 {
				err = errCut
				break loop
			}
			if len(out)+m > lim {
				if out, lim, err = d.moreRef(out, m); err != nil {
					break loop
				}
			}
			out = append(out, c[:m]...)
			d.took(col, c[m:])
		case 1:
			var v uint64
			c := d.col(col)
			switch kd {
			case kTime, kStart, kEnd:
				x, m := uvarint(c)
				if m <= 0 {
					err = errCut
					break loop
				}
				d.took(col, c[m:])
				if kd == kEnd {
					v = start + x
				} else {
					base, how := d.prev[col], either
					if kd == kStart && d.s.ref != 0 {
						base, how = startBase(base, d.starts, d.childStart, parent, d.nref, d.traceStarts, sameTrace)
					}
					v = startOf(x, base, how)
					d.prev[col] = v
					if kd == kStart {
						start = v
						if d.s.ref != 0 {
							d.starts = recordStart(d.starts, d.nref, v)
							d.childStart = recordChild(d.childStart, forward, v)
							d.traceStarts = recordStart(d.traceStarts, d.nback, v)
						}
					}
				}
			case kDouble:
				if len(c) < 8 {
					err = errCut
					break loop
				}
				v = binary.BigEndian.Uint64(c) ^ d.prev[col]
				d.prev[col] = v
				d.took(col, c[8:])
			default:
				if len(c) < 8 {
					err = errCut
					break loop
				}
				v = binary.LittleEndian.Uint64(c)
				d.took(col, c[8:])
			}
			if len(out)+8 > lim {
				if out, lim, err = d.moreRef(out, 8); err != nil {
					break loop
				}
			}
			out = binary.LittleEndian.AppendUint64(out, v)
		case 5:
			c := d.col(col)
			if len(c) < 4 {
				err = errCut
				break loop
			}
			if len(out)+4 > lim {
				if out, lim, err = d.moreRef(out, 4); err != nil {
					break loop
				}
			}
			out = append(out, c[:4]...)
			d.took(col, c[4:])
		case 2:
			if kd == kMsg {
				if len(st) == 0 || st[0] == 0 || st[0] > binary.MaxVarintLen64 {
					err = errSize
					break loop
				}
				size := int(st[0])
				st = st[1:]
				if len(out)+size > lim {
					if out, lim, err = d.moreRef(out, size); err != nil {
						break loop
					}
				}
				at := len(out)
				out = out[:at+size]
				if n.byCtx != nil && num == uint64(n.ctxUse) {
					child = n.byCtx[bucket]
				}
				d.st, d.out, d.lim = stString(st), out, lim
				if err = d.walkRef(child, depth+1); err != nil {
					return err
				}
				st, out, lim = stBytes(d.st), d.out, d.lim
				l := uint64(len(out) - at - size)
				if size < binary.MaxVarintLen64 && l>>(7*size) != 0 {
					err = errFit
					break loop
				}
				b := out[at : at+size]
				for i := range size - 1 {
					b[i] = byte(l) | 0x80
					l >>= 7
				}
				b[size-1] = byte(l)
				continue
			}
			c := d.col(col)
			if kd == kBack {
				v, m := uvarint(c)
				if m <= 0 {
					err = errCut
					break loop
				}
				at := len(out)
				sameTrace = -1
				if v > 0 {
					o := int64(d.nback) - int64(v)
					if v > uint64(d.nback) || o >= int64(len(d.backs)) {
						err = errRef
						break loop
					}
					l := int(d.backLen[o])
					if l == 0 { // a place holder (Decoder.back)
						err = errRef
						break loop
					}
					if len(out)+l > lim {
						if out, lim, err = d.moreRef(out, l); err != nil {
							break loop
						}
					}
					p := int(d.backs[o])
					out = append(out, out[p:p+l]...)
					sameTrace = int(o)
					d.took(col, c[m:])
				} else {
					c = c[m:]
					l, m := uvarint(c)
					if m <= 0 || l > uint64(len(c)-m) {
						err = errCut
						break loop
					}
					e := m + int(l)
					if len(out)+e > lim {
						if out, lim, err = d.moreRef(out, e); err != nil {
							break loop
						}
					}
					out = append(out, c[:e]...)
					d.took(col, c[e:])
				}
				if len(d.backs) < maxRefs {
					if raw := len(out) - at; raw < len(refKey{}) {
						d.backs, d.backLen = append(d.backs, int32(at)), append(d.backLen, uint8(raw))
					} else {
						// Never referenced (keyOf): a place holder keeps
						// the ordinals the encoder's.
						d.backs, d.backLen = append(d.backs, int32(at)), append(d.backLen, 0)
					}
				}
				d.nback++
				continue
			}
			if kd == kRef {
				v, m := uvarint(c)
				if m <= 0 {
					err = errCut
					break loop
				}
				c = c[m:]
				d.took(col, c)
				parent, forward = -1, -1
				if v > 0 {
					o := int64(d.prevRef) + int64(unzigzag(v-1))
					d.prevRef = int(o)
					if o >= 0 && o < maxRefs {
						parent, forward = parentOf(int(o), len(d.starts), d.nref)
					}
					if o < 0 || o >= int64(len(d.offs)-1) {
						err = errRef
						break loop
					}
					val, vlen := d.refCol[d.offs[o]:d.offs[o+1]], d.refLen[d.loffs[o]:d.loffs[o+1]]
					if len(out)+len(vlen)+len(val) > lim {
						if out, lim, err = d.moreRef(out, len(vlen)+len(val)); err != nil {
							break loop
						}
					}
					out = append(append(out, vlen...), val...)
					continue
				}
			}
			if kd == kID {
				lc := d.col(lcol)
				l, m := uvarint(lc)
				if m <= 0 || l > uint64(len(c)) {
					err = errCut
					break loop
				}
				if len(out)+m+int(l) > lim {
					if out, lim, err = d.moreRef(out, m+int(l)); err != nil {
						break loop
					}
				}
				out = append(append(out, lc[:m]...), c[:l]...)
				d.took(lcol, lc[m:])
				d.took(col, c[l:])
				if col == d.s.ref {
					d.nref++
				}
				continue
			}
			l, m := uvarint(c)
			if m <= 0 || l > uint64(len(c)-m) {
				err = errCut
				break loop
			}
			e := m + int(l)
			if len(out)+e > lim {
				if out, lim, err = d.moreRef(out, e); err != nil {
					break loop
				}
			}
			if n.byCtx != nil && num == uint64(n.ctxSet) && kd == kLen {
				bucket = keyBucket(c[m:e])
			}
			out = append(out, c[:e]...)
			d.took(col, c[e:])
		default:
			err = errWire
			break loop
		}
	}
	d.st, d.out, d.lim = stString(st), out, lim
	return err
}

// sameDecode decodes each of msgs with a decoder that walks with walk and
// one that walks with walkRef, on one stream each, and fails unless both
// give the same output and the same error.
func sameDecode(t *testing.T, sig Signal, limit int, msgs ...[]byte) {
	t.Helper()
	sameDecodeAs(t, sig, limit, func(d *Decoder) { d.walker = (*Decoder).walkRef }, msgs...)
}

// sameDecodeAs is sameDecode with the reference decoder set up by ref.
func sameDecodeAs(t *testing.T, sig Signal, limit int, ref func(*Decoder), msgs ...[]byte) {
	t.Helper()
	// Each message twice: into nil, and after a prefix in a buffer
	// with room to spare (the handler's dst is the compressed
	// message's buffer); the charges as well as the output agree.
	for _, spare := range []int{-1, 1 << 10} {
		d, rd := NewDecoder(sig), NewDecoder(sig)
		ref(rd)
		for i, m := range msgs {
			var dst, rdst []byte
			if spare >= 0 {
				dst, rdst = append(make([]byte, 0, 3+spare), "pre"...), append(make([]byte, 0, 3+spare), "pre"...)
			}
			var charges, rcharges []int
			got, err := d.Decode(dst, m, limit, func(n int) error { charges = append(charges, n); return nil })
			want, werr := rd.Decode(rdst, m, limit, func(n int) error { rcharges = append(rcharges, n); return nil })
			if fmt.Sprint(err) != fmt.Sprint(werr) || !bytes.Equal(got, want) {
				t.Fatalf("message %d (spare %d): walk gave %d bytes, %v; the reference %d bytes, %v", i, spare, len(got), err, len(want), werr)
			}
			if fmt.Sprint(charges) != fmt.Sprint(rcharges) {
				t.Fatalf("message %d (spare %d): walk charged %v; the reference %v", i, spare, charges, rcharges)
			}
			if spare >= 0 && string(got[:min(3, len(got))]) != "pre" {
				t.Fatalf("message %d: the prefix is lost: %q", i, got[:min(3, len(got))])
			}
		}
	}
}

// TestWalkSameAsRef: on the golden payloads and random streams, their
// encodings, and those encodings cut short or with a byte changed, walk
// and walkRef agree.
func TestWalkSameAsRef(t *testing.T) {
	for _, s := range signals {
		var msgs [][]byte
		for _, env := range envelopes(t, s.name) {
			msgs = append(msgs, env)
		}
		for seed := range 10 {
			g := &gen{r: rand.New(rand.NewPCG(uint64(seed), uint64(s.sig)))}
			for i := range 8 {
				msgs = append(msgs, g.request(s.sig, uint64(i)))
			}
		}
		e := NewEncoder(s.sig)
		var encs [][]byte
		for _, m := range msgs {
			encs = append(encs, e.Append(nil, m))
		}
		sameDecode(t, s.sig, 64<<20, encs...)
		r := rand.New(rand.NewPCG(1, uint64(s.sig)))
		for i, enc := range encs {
			if len(enc) < 2 || i%3 != 0 {
				continue
			}
			cut := enc[:1+r.IntN(len(enc)-1)]
			flipped := append([]byte(nil), enc...)
			flipped[1+r.IntN(len(enc)-1)] ^= byte(1 + r.IntN(255))
			sameDecode(t, s.sig, 64<<20, encs[:i]...)
			sameDecode(t, s.sig, 64<<20, append(append([][]byte(nil), encs[:i]...), cut)...)
			sameDecode(t, s.sig, 64<<20, append(append([][]byte(nil), encs[:i]...), flipped)...)
		}
	}
}

// FuzzDecodeSame: on any bytes, walk and walkRef agree (output and
// error), twice on one stream (the second time with the series the first
// left).
func FuzzDecodeSame(f *testing.F) {
	for _, s := range signals {
		for _, env := range envelopes(f, s.name) {
			if len(env) < 64<<10 {
				f.Add(NewEncoder(s.sig).Append(nil, env), uint8(s.sig))
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, sig uint8) {
		sameDecode(t, Signal(sig%5), 1<<16, src, src)
	})
}

// more makes room for m more bytes of output after out, within the
// declared length: it charges the output as it grows (a chargeStep at a
// time, never the declared length alone: a reference to a series copies
// bytes the message does not carry, so its size is no bound) and grows
// out's capacity at once to the hint (growRatio), or by doubling (its
// copies stay linear), charging the new
// capacity before allocating it: a message that declares more than it
// decodes to, or fails half way, holds no memory beyond its charge
// (TestDecodeChargesWhatItAllocates). It returns the new limit of what may
// be written without calling it again.
func (d *Decoder) moreRef(out []byte, m int) ([]byte, int, error) {
	end := len(out) + m
	if end > d.want {
		return out, 0, errLong
	}
	if end > cap(out) {
		c := min(d.want, max(end, 2*cap(out), chargeStep, d.hint))
		if c == d.want {
			c = d.room
		}
		if err := d.charge(c); err != nil {
			return out, 0, err
		}
		nb := make([]byte, len(out), c)
		copy(nb, out)
		out = nb
		d.buf = nb
	}
	if end > d.charged {
		if err := d.charge(min(d.want, max(end, d.charged+chargeStep))); err != nil {
			return out, 0, err
		}
	}
	return out, min(d.charged, cap(out)), nil
}
