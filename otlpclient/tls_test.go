package otlpclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientTLS: each mistake in the files is an error naming it; none
// gives a TLS 1.2+ configuration with the server name.
func TestClientTLS(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    TLSFiles
		want string
	}{
		{TLSFiles{CAFile: filepath.Join(dir, "missing.pem")}, "cannot read the CA file"},
		{TLSFiles{CAFile: notPEM}, "holds no PEM certificate"},
		{TLSFiles{CertFile: "c.pem"}, "must be given together"},
		{TLSFiles{CertFile: notPEM, KeyFile: notPEM}, "cannot load the client certificate"},
	} {
		if _, err := ClientTLS(c.f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ClientTLS(%+v) = %v, want %q", c.f, err, c.want)
		}
	}
	cfg, err := ClientTLS(TLSFiles{ServerName: "collector"})
	if err != nil || cfg.ServerName != "collector" || cfg.MinVersion == 0 || cfg.RootCAs != nil {
		t.Fatalf("ClientTLS = %+v, %v", cfg, err)
	}
}
