//go:build !otelarrow

package service

// OTelArrowBuilt reports whether this binary has OTel-Arrow in (the build
// tag otelarrow): not this one.
const OTelArrowBuilt = false

func (OTelArrowConfig) check() error { return nil }

func (s *Service) mountOTelArrow() func() { return nil }
