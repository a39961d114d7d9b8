package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// layer is the filesystem the final stage's COPY instructions build, kept
// in memory (the image is a few megabytes) and keyed by absolute path.
type layer struct {
	mtime   time.Time
	entries map[string]*layerEntry
}

type layerEntry struct {
	typ      byte // tar.TypeReg, tar.TypeDir or tar.TypeSymlink
	mode     int64
	uid, gid int
	data     []byte
	linkname string
}

func newLayer(mtime time.Time) *layer {
	return &layer{mtime: mtime, entries: map[string]*layerEntry{}}
}

// copySources resolves where COPY sources come from: the build context
// directory, or for --from=NAME a local directory standing in for the root
// filesystem of that build stage.
type copySources struct {
	context string
	stages  map[string]string
}

// apply performs one COPY the way Docker does: a file lands at dest, or
// inside dest when dest ends with '/' or is a directory already; a
// directory's contents (not the directory itself) land in dest, which is
// created with the --chown owner. Parent directories that do not exist are
// created 0755 and owned by root.
func (l *layer) apply(c copyInstr, src copySources) error {
	root := src.context
	if c.From != "" {
		var ok bool
		if root, ok = src.stages[c.From]; !ok {
			return fmt.Errorf("line %d: COPY --from=%s: no directory given for stage %q (-stage %s=DIR)", c.Line, c.From, c.From, c.From)
		}
	}
	for _, s := range c.Sources {
		local, err := resolveSource(root, s, c.From == "")
		if err != nil {
			return fmt.Errorf("line %d: COPY %s: %w", c.Line, s, err)
		}
		fi, err := os.Lstat(local)
		if err != nil {
			return fmt.Errorf("line %d: COPY %s: %w", c.Line, s, err)
		}
		dest := path.Clean(c.Dest)
		if fi.IsDir() {
			if err := l.addTree(local, dest, c); err != nil {
				return fmt.Errorf("line %d: COPY %s: %w", c.Line, s, err)
			}
			continue
		}
		if e := l.entries[dest]; strings.HasSuffix(c.Dest, "/") || (e != nil && e.typ == tar.TypeDir) {
			dest = path.Join(dest, path.Base(filepath.ToSlash(local)))
		}
		if err := l.addFile(local, fi, dest, c); err != nil {
			return fmt.Errorf("line %d: COPY %s: %w", c.Line, s, err)
		}
	}
	return nil
}

// resolveSource maps a COPY source to a local path under root. Context
// sources are relative to the context and may not leave it, as in Docker.
func resolveSource(root, src string, isContext bool) (string, error) {
	clean := path.Clean("/" + src)
	if isContext && strings.HasPrefix(path.Clean(src), "..") {
		return "", fmt.Errorf("source outside the build context")
	}
	return filepath.Join(root, filepath.FromSlash(clean)), nil
}

func (l *layer) addTree(localDir, dest string, c copyInstr) error {
	fi, err := os.Stat(localDir)
	if err != nil {
		return err
	}
	l.mkdirAll(path.Dir(dest))
	l.entries[dest] = &layerEntry{typ: tar.TypeDir, mode: c.mode(fi.Mode()), uid: c.UID, gid: c.GID}
	return filepath.WalkDir(localDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == localDir {
			return err
		}
		rel, err := filepath.Rel(localDir, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		target := path.Join(dest, filepath.ToSlash(rel))
		if d.IsDir() {
			l.entries[target] = &layerEntry{typ: tar.TypeDir, mode: c.mode(fi.Mode()), uid: c.UID, gid: c.GID}
			return nil
		}
		return l.addFile(p, fi, target, c)
	})
}

func (l *layer) addFile(local string, fi fs.FileInfo, dest string, c copyInstr) error {
	l.mkdirAll(path.Dir(dest))
	e := &layerEntry{mode: c.mode(fi.Mode()), uid: c.UID, gid: c.GID}
	switch {
	case fi.Mode().IsRegular():
		data, err := os.ReadFile(local)
		if err != nil {
			return err
		}
		e.typ, e.data = tar.TypeReg, data
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(local)
		if err != nil {
			return err
		}
		e.typ, e.linkname, e.mode = tar.TypeSymlink, target, 0o777
	default:
		return fmt.Errorf("%s: cannot copy a %s", local, fi.Mode().Type())
	}
	l.entries[dest] = e
	return nil
}

// mkdirAll creates the missing directories of dir the way Docker creates a
// COPY destination's parents: 0755, root-owned.
func (l *layer) mkdirAll(dir string) {
	for d := dir; d != "/" && d != "."; d = path.Dir(d) {
		if _, ok := l.entries[d]; ok {
			continue
		}
		l.entries[d] = &layerEntry{typ: tar.TypeDir, mode: 0o755}
	}
}

func (c copyInstr) mode(m fs.FileMode) int64 {
	if c.Mode >= 0 {
		return c.Mode
	}
	return int64(m.Perm())
}

// tar returns the layer as an uncompressed tar stream. Entries are sorted
// by path, so parents precede children, and every timestamp is mtime, so
// the same inputs always give the same bytes (and the same digest).
func (l *layer) tar() ([]byte, error) {
	paths := make([]string, 0, len(l.entries))
	for p := range l.entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		e := l.entries[p]
		hdr := &tar.Header{
			Typeflag: e.typ,
			Name:     strings.TrimPrefix(p, "/"),
			Linkname: e.linkname,
			Mode:     e.mode,
			Uid:      e.uid,
			Gid:      e.gid,
			Size:     int64(len(e.data)),
			ModTime:  l.mtime,
			Format:   tar.FormatPAX,
		}
		if e.typ == tar.TypeDir {
			hdr.Name += "/"
		}
		if len(hdr.Name) <= 100 && len(hdr.Linkname) <= 100 {
			hdr.Format = tar.FormatUSTAR
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("cannot write layer entry %s: %w", p, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("cannot write layer entry %s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("cannot write layer: %w", err)
	}
	return buf.Bytes(), nil
}
