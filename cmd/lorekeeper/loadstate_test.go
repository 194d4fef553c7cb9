package main

import (
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordedLog keeps the messages a sessionLog sends.
type recordedLog struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recordedLog) Enabled(context.Context, slog.Level) bool { return true }
func (r *recordedLog) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Message)
	return nil
}
func (r *recordedLog) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recordedLog) WithGroup(string) slog.Handler      { return r }

func (r *recordedLog) told() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.msgs {
		if strings.HasPrefix(m, "LoreKeeper") {
			out = append(out, m)
		}
	}
	return out
}

// TestWatchLoad: the client hears of a load's progress as "N of M
// entities stored" with M fixed, each change once, and "ready" exactly
// once when the content is complete, also on a restart that is complete
// at once (which once said it twice); a rebuild later is told, and its
// end.
func TestWatchLoad(t *testing.T) {
	loading := func(n uint64) loadState { return loadState{stored: n, total: 100} }
	ready := loadState{complete: true, stored: 100, total: 100}
	rebuilding := loadState{rebuilding: "the store was damaged", stored: 40, total: 100}
	tests := []struct {
		name   string
		states []loadState // what each read returns, the first for checkLoad
		want   []string
	}{
		{"first load", []loadState{loading(0), loading(0), loading(50), ready, ready, ready}, []string{
			"LoreKeeper is loading its content: 0 of 100 entities stored.",
			"LoreKeeper is loading its content: 50 of 100 entities stored.",
			"LoreKeeper is ready: 100 entities stored and searchable.",
		}},
		{"restart", []loadState{ready, ready, ready, ready}, []string{
			"LoreKeeper is ready: 100 entities stored and searchable.",
		}},
		{"a rebuild later", []loadState{ready, ready, rebuilding, rebuilding, ready, ready}, []string{
			"LoreKeeper is ready: 100 entities stored and searchable.",
			"LoreKeeper is rebuilding its store from the stream (the store was damaged): 40 of 100 entities stored.",
			"LoreKeeper is ready: 100 entities stored and searchable.",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordedLog{}
			tell := &sessionLog{srv: mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil), log: slog.New(rec)}
			notice := &loadNotice{}
			var mu sync.Mutex
			reads := 0
			allRead := make(chan struct{})
			read := func(context.Context) loadState {
				mu.Lock()
				defer mu.Unlock()
				i := min(reads, len(tt.states)-1)
				reads++
				if reads == len(tt.states) {
					close(allRead)
				}
				return tt.states[i]
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			was := checkLoad(ctx, read, tell, notice)
			go func() {
				defer close(done)
				watchLoad(ctx, read, tell, notice, was, time.Millisecond)
			}()
			<-allRead
			cancel()
			<-done
			got := rec.told()
			for i := range got {
				// The messages' last sentences are for people.
				got[i] = got[i][:strings.Index(got[i], ".")+1]
				if j := strings.Index(got[i], "searchable."); j > 0 {
					got[i] = got[i][:j+len("searchable.")]
				}
			}
			if strings.Join(got, "\n") != strings.Join(cutFirstSentences(tt.want), "\n") {
				t.Errorf("told:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if n := notice.msg.Load(); (n == nil) != tt.states[len(tt.states)-1].complete {
				t.Errorf("answers' warning at the end: %v, want none only when complete", n)
			}
		})
	}
}

func cutFirstSentences(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s[:strings.Index(s, ".")+1]
		if j := strings.Index(s, "searchable."); j > 0 {
			out[i] = s[:j+len("searchable.")]
		}
	}
	return out
}

// TestLoadTotal: M is what the bundled content holds from the start, and
// grows only when more than that is stored (homebrew), never back; the
// wait, read less often than the count, does not move it.
func TestLoadTotal(t *testing.T) {
	lt := &loadTotal{expected: 9795}
	for _, c := range []struct{ stored, pending, want uint64 }{
		{0, 0, 9795}, {0, 1917, 9795}, {1282, 600, 9795}, {7860, 2890, 9795}, {9795, 20, 9795}, {9815, 0, 9815}, {9800, 0, 9815},
	} {
		if got := lt.of(c.stored, c.pending); got != c.want {
			t.Errorf("of(%d stored, %d pending) = %d, want %d", c.stored, c.pending, got, c.want)
		}
	}
	unknown := &loadTotal{}
	if a, b := unknown.of(10, 90), unknown.of(50, 10); a != 100 || b != 100 {
		t.Errorf("with nothing expected: %d then %d, want 100 both times", a, b)
	}
}

// TestStartReason: a call the start cannot answer yet is told so, and when
// to ask again: a download's remaining time at its rate so far, and never
// that it is not an error (it is one: the call got no answer).
func TestStartReason(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name string
		snap startSnapshot
		want string
	}{
		{"download under way", startSnapshot{msg: "downloading the embedding model: 40 of 112 MB", long: true, done: 40e6, total: 112e6, since: now.Add(-20 * time.Second)},
			"in about 45 seconds"}, // 72 MB at 2 MB/s, and the load after it
		{"converting", startSnapshot{msg: "converting the embedding model (once)", long: true, done: 112e6, total: 112e6}, "in about 20 seconds"},
		{"opening the data", startSnapshot{msg: "opening its data"}, "in a few seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.snap.reason()
			if !strings.HasPrefix(got, "LoreKeeper cannot answer yet") || !strings.Contains(got, tt.snap.msg) || strings.Contains(got, "not an error") {
				t.Errorf("reason = %q", got)
			}
			if r := tt.snap.retryIn(now); r != tt.want {
				t.Errorf("retryIn = %q, want %q", r, tt.want)
			}
		})
	}
	// Long waits are in minutes.
	slow := startSnapshot{long: true, done: 1e6, total: 112e6, since: now.Add(-10 * time.Second)}
	if m := regexp.MustCompile(`in about (\d+) minutes`).FindStringSubmatch(slow.retryIn(now)); m == nil {
		t.Errorf("a download at 0.1 MB/s: %q, want minutes", slow.retryIn(now))
	} else if n, _ := strconv.Atoi(m[1]); n < 15 || n > 20 {
		t.Errorf("a download at 0.1 MB/s with 111 MB to go: %s minutes, want about 19", m[1])
	}
}
