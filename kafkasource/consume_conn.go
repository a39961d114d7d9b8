package kafkasource

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
)

// PermanentConnError reports whether err, from Ping, is one that waiting
// cannot fix, so that a server should refuse to start rather than retry
// forever: the brokers' certificate is not trusted (a wrong CA file or
// server name), a broker refused the TLS handshake (no or an untrusted
// client certificate for mutual TLS), TLS spoken to a plaintext listener,
// or SASL authentication failed. A refused or timed-out connection is not
// permanent: the brokers may just not be up yet.
func PermanentConnError(err error) bool {
	if err == nil {
		return false
	}
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		alert    tls.AlertError
		record   tls.RecordHeaderError
		op       *net.OpError
	)
	// crypto/tls reports an alert the peer sent (a broker refusing our
	// certificate: bad_certificate, certificate_required, unknown_ca) as a
	// *net.OpError with Op "remote error".
	if errors.As(err, &op) && op.Op == "remote error" {
		return true
	}
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &alert) || errors.As(err, &record) ||
		errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.IllegalSaslState) ||
		errors.Is(err, kerr.UnsupportedSaslMechanism)
}
