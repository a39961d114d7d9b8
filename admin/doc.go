// Package admin serves the operator's listener, apart from the OTLP ports
// so that it can stay on localhost or a private network while those face
// clients: the live status page / and /status.json (status.go), /metrics
// (Prometheus text, label values through package redact), /config (the
// effective configuration), /healthz (the process is alive), /readyz
// (storage open and not shutting down: safe to send traffic) and, with
// Config.Pprof, /debug/pprof/ (its cmdline with the secrets of the command
// line hidden). Every figure it shows comes from one metrics set.
//
// It is a package of its own, below service, because it reads only a
// metrics set and the settings it is handed: the receiver's parts know
// nothing of it, and an embedder may serve it on its own mux or not at
// all.
package admin
