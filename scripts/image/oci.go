package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Media types of the OCI image specification v1.1 (media-types.md).
const (
	mediaTypeIndex     = "application/vnd.oci.image.index.v1+json"
	mediaTypeManifest  = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeConfig    = "application/vnd.oci.image.config.v1+json"
	mediaTypeLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// descriptor is an OCI content descriptor (descriptor.md).
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// imageConfig is the OCI image configuration (config.md); the field names
// of Config are the ones Docker and containerd read.
type imageConfig struct {
	Created      string          `json:"created,omitempty"`
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	Config       containerConfig `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []historyEntry `json:"history,omitempty"`
}

type historyEntry struct {
	Created   string `json:"created,omitempty"`
	CreatedBy string `json:"created_by,omitempty"`
	Comment   string `json:"comment,omitempty"`
}

type containerConfig struct {
	User         string              `json:"User,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	Env          []string            `json:"Env,omitempty"`
	Entrypoint   []string            `json:"Entrypoint,omitempty"`
	Cmd          []string            `json:"Cmd,omitempty"`
	Volumes      map[string]struct{} `json:"Volumes,omitempty"`
	WorkingDir   string              `json:"WorkingDir,omitempty"`
	Labels       map[string]string   `json:"Labels,omitempty"`
	StopSignal   string              `json:"StopSignal,omitempty"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

// dockerManifestEntry is one entry of manifest.json, the file `docker load`
// of Docker before 25.0 (and `crane push`) look for in an archive.
type dockerManifestEntry struct {
	Config   string   `json:"Config"`
	RepoTags []string `json:"RepoTags"`
	Layers   []string `json:"Layers"`
}

// defaultPath is the PATH BuildKit puts into the configuration of a Linux
// image that sets none, so both ways of building give the same Env.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// image is everything an archive holds for one single-layer image.
type image struct {
	Name, Tag string // repository name and tag, e.g. "otlp-lite", "v1.2.0"
	OS, Arch  string
	Created   time.Time
	Stage     *finalStage
	Layer     *layer
}

// writeArchive writes img as an OCI image layout (image-layout.md) in a
// tar stream, the format of `docker save` since Docker 25 and of
// `podman save --format oci-archive`: oci-layout, index.json and blobs, plus
// Docker's manifest.json so older `docker load` reads it too. The layer is
// gzip-compressed; the same img always gives the same bytes.
func writeArchive(w io.Writer, img image) error {
	layerTar, err := img.Layer.tar()
	if err != nil {
		return err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(layerTar); err != nil {
		return fmt.Errorf("cannot compress layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("cannot compress layer: %w", err)
	}
	layerBlob := gz.Bytes()

	st := img.Stage
	cfg := imageConfig{
		Created:      img.Created.UTC().Format(time.RFC3339),
		Architecture: img.Arch,
		OS:           img.OS,
		Config: containerConfig{
			User:       st.User,
			Env:        st.Env,
			Entrypoint: st.Entrypoint,
			Cmd:        st.Cmd,
			WorkingDir: st.WorkingDir,
			Labels:     st.Labels,
			StopSignal: st.StopSignal,
		},
	}
	if cfg.Config.WorkingDir == "/" {
		cfg.Config.WorkingDir = ""
	}
	if !hasEnv(st.Env, "PATH") {
		cfg.Config.Env = append([]string{defaultPath}, st.Env...)
	}
	if len(cfg.Config.Labels) == 0 {
		cfg.Config.Labels = nil
	}
	if len(st.Exposed) > 0 {
		cfg.Config.ExposedPorts = map[string]struct{}{}
		for _, p := range st.Exposed {
			cfg.Config.ExposedPorts[p] = struct{}{}
		}
	}
	if len(st.Volumes) > 0 {
		cfg.Config.Volumes = map[string]struct{}{}
		for _, v := range st.Volumes {
			cfg.Config.Volumes[v] = struct{}{}
		}
	}
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{digestOf(layerTar)}
	cfg.History = []historyEntry{{
		Created:   cfg.Created,
		CreatedBy: "COPY (Dockerfile final stage)",
		Comment:   "packed without a Docker engine by scripts/image",
	}}
	cfgBlob, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("cannot encode image config: %w", err)
	}

	man := manifest{
		SchemaVersion: 2,
		MediaType:     mediaTypeManifest,
		Config:        descriptor{MediaType: mediaTypeConfig, Digest: digestOf(cfgBlob), Size: int64(len(cfgBlob))},
		Layers:        []descriptor{{MediaType: mediaTypeLayerGzip, Digest: digestOf(layerBlob), Size: int64(len(layerBlob))}},
	}
	manBlob, err := json.Marshal(man)
	if err != nil {
		return fmt.Errorf("cannot encode manifest: %w", err)
	}
	ref := img.Name + ":" + img.Tag
	idx := index{
		SchemaVersion: 2,
		MediaType:     mediaTypeIndex,
		Manifests: []descriptor{{
			MediaType: mediaTypeManifest,
			Digest:    digestOf(manBlob),
			Size:      int64(len(manBlob)),
			// ref.name is the tag (annotations.md); containerd and
			// Docker 25+ name the loaded image from image.name.
			Annotations: map[string]string{
				"org.opencontainers.image.ref.name": img.Tag,
				"io.containerd.image.name":          fullRef(ref),
			},
			Platform: &platform{Architecture: img.Arch, OS: img.OS},
		}},
	}
	idxBlob, err := json.Marshal(idx)
	if err != nil {
		return fmt.Errorf("cannot encode index: %w", err)
	}
	dockerMan, err := json.Marshal([]dockerManifestEntry{{
		Config:   blobPath(cfgBlob),
		RepoTags: []string{ref},
		Layers:   []string{blobPath(layerBlob)},
	}})
	if err != nil {
		return fmt.Errorf("cannot encode manifest.json: %w", err)
	}

	tw := tar.NewWriter(w)
	dir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: img.Created, Format: tar.FormatUSTAR})
	}
	file := func(name string, data []byte) error {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: img.Created, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	steps := []func() error{
		func() error { return file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)) },
		func() error { return file("index.json", idxBlob) },
		func() error { return file("manifest.json", dockerMan) },
		func() error { return dir("blobs/") },
		func() error { return dir("blobs/sha256/") },
		func() error { return file(blobPath(layerBlob), layerBlob) },
		func() error { return file(blobPath(cfgBlob), cfgBlob) },
		func() error { return file(blobPath(manBlob), manBlob) },
		tw.Close,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("cannot write image archive: %w", err)
		}
	}
	return nil
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func blobPath(b []byte) string {
	sum := sha256.Sum256(b)
	return "blobs/sha256/" + hex.EncodeToString(sum[:])
}

func hasEnv(env []string, key string) bool {
	for _, kv := range env {
		if len(kv) > len(key) && kv[:len(key)+1] == key+"=" {
			return true
		}
	}
	return false
}

// fullRef spells a Docker Hub shorthand the way containerd needs it:
// "otlp-lite:v1" is "docker.io/library/otlp-lite:v1".
func fullRef(ref string) string {
	first, _, hasSlash := strings.Cut(ref, "/")
	switch {
	case !hasSlash:
		return "docker.io/library/" + ref
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		return "docker.io/" + ref
	}
	return ref
}
