package wait

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !For(context.Background(), 3*time.Second) {
			t.Fatal("For reported a cut short wait on a context that never ends")
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Fatalf("waited %v, want 3s", got)
		}

		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		start = time.Now()
		if For(ctx, time.Hour) {
			t.Fatal("For reported a full wait when its context ended first")
		}
		if got := time.Since(start); got != time.Second {
			t.Fatalf("returned after %v, want 1s (when ctx ended)", got)
		}
	})
}
