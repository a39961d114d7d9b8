package disk

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The log's identity (issue 24, exactly once): a random name written once
// in DATA/ID, which a reader that sends the log's records elsewhere
// (forwarding, replay) puts in each record's idempotency key with the
// record's position, so that a resend after a crash carries the same key
// and the receiver stores it once. Offsets are never reused (package
// comment), so the identity and a position name one record for the log's
// life; a copy of the directory is the same log and keeps the name.

// IDFile is the name of the identity file in a data directory.
const IDFile = "ID"

// idLen is the identity's length: 128 random bits in hex, unique without
// coordination, short because every key a receiver remembers holds it.
const idLen = 32

// ErrBadID is wrapped by the error of an identity file that does not hold
// an identity (damaged, or written by something else). It is never
// replaced: a new identity would give every record a new key and undo
// exactly-once for whatever is resent.
var ErrBadID = errors.New("not a log identity")

// LogID returns the identity of the log in dataDir, creating it if the
// directory has none yet: written to a temporary file, fsynced, linked to
// IDFile (which fails if another process created it meanwhile: then that
// one is read) and the directory fsynced, so that the identity read is the
// one every later reader reads, even after a power loss. It may be called
// by readers alongside a Store (it takes no lock).
func LogID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, IDFile)
	id, err := readID(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return id, err
	}
	var b [idLen / 2]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	id = hex.EncodeToString(b[:])
	tmp := path + ".tmp-" + id
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("cannot create the log identity: %w", err)
	}
	defer os.Remove(tmp)
	_, err = f.WriteString(id + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("cannot write the log identity: %w", err)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("cannot create the log identity: %w", err)
	}
	if err := syncDir(dataDir); err != nil {
		return "", err
	}
	return readID(path)
}

// ID returns the identity of the store's log (LogID).
func (s *Store) ID() (string, error) { return LogID(s.dir) }

// readID reads an identity file.
func readID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	id := strings.TrimSuffix(string(b), "\n")
	if len(id) != idLen || strings.Trim(id, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%s: %w (want %d hex digits)", path, ErrBadID, idLen)
	}
	return id, nil
}
