package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// ConfigEntry is one flag's effective value: what serve runs with, its
// secrets already hidden (the command that parsed the flags hides them).
type ConfigEntry struct {
	Section string `json:"section"`
	Flag    string `json:"flag"`
	Env     string `json:"env"`
	Value   string `json:"value"`
	// Source is where the value came from: flag, env or default.
	Source string `json:"source"`
	// Changed says the value differs from the flag's default (a flag set
	// to its default is not): what the start-up log shows.
	Changed bool `json:"changed"`
}

// configHandler serves the effective configuration on the admin port:
// plain text, one flag per line, or JSON with ?format=json.
func configHandler(entries []ConfigEntry) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") == "json" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(entries)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		section := ""
		for _, e := range entries {
			if e.Section != section {
				if section != "" {
					fmt.Fprintln(w)
				}
				section = e.Section
				fmt.Fprintf(w, "# %s\n", section)
			}
			fmt.Fprintf(w, "%s=%q\t# %s, %s\n", e.Flag, e.Value, e.Source, e.Env)
		}
	})
}
