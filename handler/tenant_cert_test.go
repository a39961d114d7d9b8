package handler

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// testCA issues certificates for the mTLS tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert, key, pool}
}

func (ca *testCA) issue(t *testing.T, subject pkix.Name, dns []string, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: subject, DNSNames: dns,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// The tenant from the verified client certificate (cn, san-dns, ou), over
// gRPC and OTLP/HTTP; a client without a certificate falls back to the
// header, then to the default.
func TestTenantFromCert(t *testing.T) {
	ca := newTestCA(t)
	for _, tc := range []struct {
		field CertField
		want  string
	}{{CertCommonName, "team-cn"}, {CertDNSName, "team-dns"}, {CertOrgUnit, "team-ou"}} {
		t.Run(string(tc.field), func(t *testing.T) {
			sink := &tenantSink{}
			srcs, _ := ParseTenantSources("cert,header")
			h := New(Config{Sink: sink, Logger: quietLogger(), Tenants: &TenantConfig{Sources: srcs, CertField: tc.field}})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: h, TLSConfig: &tls.Config{
				Certificates: []tls.Certificate{ca.issue(t, pkix.Name{CommonName: "server"}, nil, x509.ExtKeyUsageServerAuth)},
				ClientCAs:    ca.pool, ClientAuth: tls.VerifyClientCertIfGiven, NextProtos: []string{"h2", "http/1.1"},
			}}
			go srv.ServeTLS(ln, "", "")
			t.Cleanup(func() { srv.Close() })
			client := ca.issue(t, pkix.Name{CommonName: "team-cn", OrganizationalUnit: []string{"team-ou"}}, []string{"team-dns"}, x509.ExtKeyUsageClientAuth)
			c := grpcwire.NewClient(ln.Addr().String(), &tls.Config{RootCAs: ca.pool, Certificates: []tls.Certificate{client}})
			if _, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID)); err != nil {
				t.Fatalf("gRPC: %v", err)
			}
			if resp, body := postTracesTLS(t, c, traceRequest(goodID, goodID)); resp != 200 {
				t.Fatalf("HTTP: %d %s", resp, body)
			}
			// Without a certificate: the header.
			anon := grpcwire.NewClient(ln.Addr().String(), &tls.Config{RootCAs: ca.pool})
			if _, err := withHeaders(anon, map[string]string{"x-scope-orgid": "team-hdr"}).Invoke(context.Background(), traceExport, traceRequest(goodID)); err != nil {
				t.Fatalf("anonymous: %v", err)
			}
			if sink.get(tc.want) != 3 || sink.get("team-hdr") != 1 {
				t.Fatalf("stored %v, want 3 items of %s and 1 of team-hdr", sink.items, tc.want)
			}
		})
	}
}

func postTracesTLS(t *testing.T, c *grpcwire.Client, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", c.BaseURL+"/v1/traces", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Status
}
