//go:build otelarrow

package arrowreceiver

import (
	"encoding/binary"
	"fmt"
)

// checkIPC walks the Arrow IPC stream messages of one payload's record
// (each: an optional 0xFFFFFFFF continuation, the metadata's int32 length,
// the Message flatbuffer, then its body of the bodyLength the flatbuffer
// declares) and refuses a message whose metadata or body would end past
// the record's bytes.
//
// The reason: arrow-go's IPC reader makes the metadata buffer of the
// length the message declares (up to 2 GiB, outside any allocator) before
// it finds the bytes missing, and sizes the body through the allocator
// before reading it. Both are declared by the client; checked here, a
// message costs at most the bytes that arrived (already charged with the
// message), whatever it declares.
func checkIPC(b []byte) error {
	pos := 0
	for len(b)-pos >= 4 {
		n := int64(int32(binary.LittleEndian.Uint32(b[pos:])))
		pos += 4
		if n == 0 {
			return nil // end of stream
		}
		if n == -1 { // continuation token: the length follows
			if len(b)-pos < 4 {
				return fmt.Errorf("cannot decode Arrow IPC message at byte %d: truncated length", pos)
			}
			n = int64(int32(binary.LittleEndian.Uint32(b[pos:])))
			pos += 4
			if n == 0 {
				return nil
			}
		}
		if n < 0 || n > int64(len(b)-pos) {
			return fmt.Errorf("cannot decode Arrow IPC message at byte %d: metadata of %d bytes in a record of %d", pos, n, len(b))
		}
		body, ok := bodyLength(b[pos : pos+int(n)])
		if !ok {
			return fmt.Errorf("cannot decode Arrow IPC message at byte %d: bad Message flatbuffer", pos)
		}
		pos += int(n)
		if body < 0 || body > int64(len(b)-pos) {
			return fmt.Errorf("cannot decode Arrow IPC message at byte %d: body of %d bytes in a record of %d", pos, body, len(b))
		}
		pos += int(body)
	}
	return nil
}

// bodyLength reads Message.bodyLength (field 3, an int64; Arrow's
// format/Message.fbs) from a Message flatbuffer, bounds-checked: the root
// table's offset, its vtable, the field's slot.
func bodyLength(fb []byte) (int64, bool) {
	if len(fb) < 8 {
		return 0, false
	}
	table := int64(binary.LittleEndian.Uint32(fb))
	if table+4 > int64(len(fb)) {
		return 0, false
	}
	vtable := table - int64(int32(binary.LittleEndian.Uint32(fb[table:])))
	if vtable < 0 || vtable+4 > int64(len(fb)) {
		return 0, false
	}
	vsize := int64(binary.LittleEndian.Uint16(fb[vtable:]))
	const slot = 4 + 2*3 // the vtable's header, then field 3's offset
	if vsize < slot+2 || vtable+slot+2 > int64(len(fb)) {
		return 0, true // absent: the default, 0
	}
	off := int64(binary.LittleEndian.Uint16(fb[vtable+slot:]))
	if off == 0 {
		return 0, true
	}
	if table+off+8 > int64(len(fb)) {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(fb[table+off:])), true
}
