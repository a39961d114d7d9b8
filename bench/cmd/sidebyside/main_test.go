package main

import (
	"os"
	"testing"

	"github.com/otlp-lite/otlp-lite/bench/internal/cputime"
)

func TestParseStatCPU(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stat    string
		want    int64
		wantErr bool
	}{
		{
			name: "plain",
			stat: "4242 (otlp-lite) S 1 4242 4242 0 -1 4194560 2360 0 0 0 1234 56 0 0 20 0 8 0 2900 1270000000 3900 18446744073709551615",
			want: 1234 + 56,
		},
		{
			name: "comm with spaces and parentheses",
			stat: "17 (a) b (c)) R 1 17 17 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 0 0",
			want: 10,
		},
		{name: "no comm", stat: "17 a R 1", wantErr: true},
		{name: "truncated", stat: "17 (a) R 1 17 17 0 -1 0 0 0 0 0 7", wantErr: true},
		{name: "not a number", stat: "17 (a) R 1 17 17 0 -1 0 0 0 0 0 x 3 0", wantErr: true},
		{name: "overflow", stat: "17 (a) R 1 17 17 0 -1 0 0 0 0 0 9223372036854775807 1 0", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cputime.ParseStatTicks([]byte(tc.stat))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Fatalf("got %d ticks, want %d", got, tc.want)
			}
		})
	}
}

func TestParseVmHWM(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  string
		want    int64
		wantErr bool
	}{
		{name: "running", status: "Name:\tx\nVmPeak:\t  3776 kB\nVmHWM:\t    2124 kB\nVmRSS:\t  2124 kB\n", want: 2124},
		{name: "last line without newline", status: "Name:\tx\nVmHWM:\t19836 kB", want: 19836},
		{name: "zombie", status: "Name:\tx\nState:\tZ (zombie)\n", wantErr: true},
		{name: "garbage", status: "VmHWM:\tlots kB\n", wantErr: true},
		{name: "prefix of another field", status: "VmHWMx:\t12 kB\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseVmHWM([]byte(tc.status))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Fatalf("got %d KiB, want %d", got, tc.want)
			}
		})
	}
}

// TestParseOwnProc reads this process's real /proc files, the format the
// driver depends on.
func TestParseOwnProc(t *testing.T) {
	if _, err := cputime.ProcessSeconds(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	hwm, anon, err := memory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if hwm <= 0 || anon <= 0 || anon > hwm {
		t.Fatalf("VmHWM = %d KiB, VmHWM − RssFile = %d KiB; want 0 < VmHWM − RssFile <= VmHWM", hwm, anon)
	}
}

// FuzzParseProc checks that no /proc content makes the parsers panic or
// return negative figures.
func FuzzParseProc(f *testing.F) {
	for _, seed := range []string{
		"4242 (otlp-lite) S 1 4242 4242 0 -1 4194560 2360 0 0 0 1234 56 0 0 20 0 8 0",
		"17 (a) b (c)) R 1 17 17 0 -1 0 0 0 0 0 7 3 0 0",
		"Name:\tx\nVmHWM:\t    2124 kB\n",
		"",
		")",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if n, err := cputime.ParseStatTicks(b); err == nil && n < 0 {
			t.Fatalf("cputime.ParseStatTicks(%q) = %d", b, n)
		}
		if n, err := parseVmHWM(b); err == nil && n < 0 {
			t.Fatalf("parseVmHWM(%q) = %d", b, n)
		}
	})
}
