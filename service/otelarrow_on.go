//go:build otelarrow

package service

import (
	"fmt"

	"github.com/otlp-lite/otlp-lite/arrowreceiver"
)

// OTelArrowBuilt reports whether this binary has OTel-Arrow in (the build
// tag otelarrow).
const OTelArrowBuilt = true

var _ = [1]struct{}{}[DefaultOTelArrowMemoryLimit-arrowreceiver.DefaultMemoryLimit] // the two defaults agree

func (c OTelArrowConfig) check() error {
	if c.Enabled && c.MemoryLimit <= 0 {
		return fmt.Errorf("bad -otelarrow-memory-limit %d: want a positive number of bytes", c.MemoryLimit)
	}
	return nil
}

// mountOTelArrow serves the Arrow*Service streams on the handler, behind
// its gates (auth, stream bound, tenant, metadata keys) like the export
// stream, into its pipeline. It returns what stops the streams at
// shutdown (nil when not served).
func (s *Service) mountOTelArrow() func() {
	c := s.cfg.OTelArrow
	if !c.Enabled {
		return nil
	}
	r := arrowreceiver.New(s.handler.Pipeline(), arrowreceiver.Config{
		MemoryLimit: uint64(c.MemoryLimit), Metrics: s.metrics})
	for _, p := range arrowreceiver.Paths {
		s.handler.Mount(p, r)
	}
	return r.Shutdown
}
