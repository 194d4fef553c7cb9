package open5e_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/open5e"
)

type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// afterSync is a JetStream and an upstream after one full resync of
// v2/conditions, and the state bucket it wrote.
func afterSync(t *testing.T) (jetstream.JetStream, *upstream, jetstream.KeyValue) {
	t.Helper()
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	first := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/conditions")})
	if _, err := first.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), ingest.StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	return js, up, kv
}

// TestFetcher_Run_futureLastRun: a last-run time in the future (a clock
// set wrong, a hand edit; the issue set 2100-01-01) is taken as now and
// logged, so the next run comes one interval later, not in 2100.
func TestFetcher_Run_futureLastRun(t *testing.T) {
	js, up, kv := afterSync(t)
	ctx := context.Background()
	if _, err := kv.Put(ctx, open5e.LastRunKey, []byte("2100-01-01T00:00:00Z")); err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	ran := make(chan struct{}, 1)
	const interval = 500 * time.Millisecond
	f := fetcher(t, js, up.srv.URL, &open5e.Options{
		Endpoints: endpoints("v2/conditions"),
		Interval:  interval,
		Logger:    slog.New(slog.NewTextHandler(logs, nil)),
		Progress: func(p open5e.Progress) {
			if p.Finished {
				select {
				case ran <- struct{}{}:
				default:
				}
			}
		},
	})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f.Run(runCtx) }()
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("no resync within 30 s of a start with last-run in 2100")
	}
	waited := time.Since(start)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v", err)
	}
	if waited < interval {
		t.Errorf("ran after %v: the future time should count as now, one interval (%v) before the next run", waited, interval)
	}
	if l := logs.String(); !strings.Contains(l, "in the future; treating it as now") || !strings.Contains(l, "2100-01-01") {
		t.Errorf("log does not say the last run's time was in the future:\n%s", l)
	}
}

// TestFetcher_Run_olderNormalizer: a full resync records the normalizer's
// version; a store last resynced by an older one (no version recorded) is
// resynced at once on start, not an interval later, and says why; one
// resynced by this one waits for its interval.
func TestFetcher_Run_olderNormalizer(t *testing.T) {
	js, up, kv := afterSync(t)
	ctx := context.Background()
	e, err := kv.Get(ctx, open5e.NormalizerKey)
	if err != nil || string(e.Value()) != strconv.Itoa(open5e.NormalizerVersion) {
		t.Fatalf("a full resync recorded normalizer %v (%v), want %d", e, err, open5e.NormalizerVersion)
	}
	run := func(t *testing.T, within time.Duration) (ran bool, log string) {
		logs := &logBuffer{}
		done := make(chan struct{}, 1)
		f := fetcher(t, js, up.srv.URL, &open5e.Options{
			Endpoints: endpoints("v2/conditions"),
			Interval:  time.Hour,
			Logger:    slog.New(slog.NewTextHandler(logs, nil)),
			Progress: func(p open5e.Progress) {
				if p.Finished {
					select {
					case done <- struct{}{}:
					default:
					}
				}
			},
		})
		runCtx, cancel := context.WithCancel(ctx)
		stopped := make(chan struct{})
		go func() { _ = f.Run(runCtx); close(stopped) }()
		defer func() { cancel(); <-stopped }()
		select {
		case <-done:
			return true, logs.String()
		case <-time.After(within):
			return false, logs.String()
		}
	}
	if ran, _ := run(t, 2*time.Second); ran {
		t.Error("resynced at once although the last run (just now) used this normalizer")
	}
	if err := kv.Delete(ctx, open5e.NormalizerKey); err != nil {
		t.Fatal(err)
	}
	ran, log := run(t, 30*time.Second)
	if !ran {
		t.Fatal("no resync within 30 s of a start after a resync by an older normalizer")
	}
	if !strings.Contains(log, "older normalizer") {
		t.Errorf("the log does not say why it resynced at once:\n%s", log)
	}
}
