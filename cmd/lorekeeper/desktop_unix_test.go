//go:build unix

package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStandalone_takeover runs two standalone servers on one data
// directory: A owns it, B shares A's service. When A exits (SIGTERM) or is
// killed (SIGKILL), B takes the data over (lock, store, embedded NATS) and
// keeps answering its client in the same session; the time from the
// signal to B's first good answer is logged.
func TestStandalone_takeover(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dataDir := t.TempDir()
			env := desktopEnv(t, dataDir, testModelDir(t))
			args := []string{"--open5e-endpoints", "v2/conditions"}
			a := startDesktopArgs(t, bin, env, args...)
			waitUntilFor(t, 5*time.Minute, "A's first load", func() bool { return a.logged("LoreKeeper is ready") })
			b := startDesktopArgs(t, bin, env, args...)
			poisoned := func(p *desktopProcess) (bool, string) {
				out, err := p.lookup(t.Context(), "lookup_rule", map[string]any{"name": "poisoned"})
				if err != nil {
					return false, err.Error()
				}
				if len(out.Results) == 0 || out.Results[0].Name != "Poisoned" {
					return false, fmt.Sprintf("%d results, warnings %q", len(out.Results), out.Warnings)
				}
				return true, ""
			}
			if ok, msg := poisoned(b); !ok || !strings.Contains(b.stderr.String(), "sharing its query service") {
				t.Fatalf("B before the takeover: answered %v (%s); stderr:\n%s", ok, msg, b.stderr.String())
			}

			if err := a.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			signalled := time.Now()
			var failures []string
			waitUntilFor(t, 2*time.Minute, "B's first good answer from its own service", func() bool {
				ok, msg := poisoned(b)
				if !ok {
					failures = append(failures, msg)
				}
				info, held := readLock(dataDir)
				return ok && held && info.PID == b.cmd.Process.Pid
			})
			took := time.Since(signalled)
			_ = a.cmd.Wait()
			t.Logf("%v: B answered from its own service %v after the signal; %d answers before that failed: %q", sig, took.Round(time.Millisecond), len(failures), failures)
			if !strings.Contains(b.stderr.String(), "taking it over") {
				t.Errorf("B's stderr does not say it took the data over:\n%s", b.stderr.String())
			}
			if info, held := readLock(dataDir); !held || info.PID != b.cmd.Process.Pid || info.GRPCAddr == "" {
				t.Errorf("lock after the takeover: %+v held %v, want B's (pid %d) with its address", info, held, b.cmd.Process.Pid)
			}
			// The command line names the new owner.
			out, err := runCLI(t, bin, env, "status")
			if err != nil || !strings.Contains(out, fmt.Sprintf("process %d", b.cmd.Process.Pid)) || !strings.Contains(out, dataDir) {
				t.Errorf("status after the takeover: %v\n%s\nwant B's pid %d and %s", err, out, b.cmd.Process.Pid, dataDir)
			}
			b.stop(t)
		})
	}
}
