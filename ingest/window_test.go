package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
)

func TestPublishAll(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	ctx := t.Context()
	nc := js.Conn()
	// A subscriber that never answers: a publish to its subject is never
	// acked, as with a stream that stalls.
	silent, err := nc.SubscribeSync("silent.x")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Unsubscribe()

	msgs := func(n int, odd map[int]string) []*nats.Msg {
		out := make([]*nats.Msg, n)
		for i := range out {
			m, err := ingest.UpsertMsg(entity(fmt.Sprintf("open5e_v2:srd-2014:spell:s%d-%d", n, i), "aa"), "", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if subj, ok := odd[i]; ok {
				m.Subject = subj
			}
			out[i] = m
		}
		return out
	}
	stored := func() uint64 {
		st, err := js.Stream(ctx, ingest.StreamName)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	fast := &ingest.WindowOptions{Window: 7, AckTimeout: 300 * time.Millisecond}

	t.Run("every message acked, over several windows", func(t *testing.T) {
		before := stored()
		if errs := ingest.PublishAll(ctx, js, msgs(50, nil), fast); errs != nil {
			t.Fatalf("errs = %v, want nil", errs)
		}
		if got := stored() - before; got != 50 {
			t.Errorf("stream gained %d messages, want 50", got)
		}
	})
	t.Run("one message without a stream fails alone", func(t *testing.T) {
		errs := ingest.PublishAll(ctx, js, msgs(20, map[int]string{9: "nostream.x"}), fast)
		for i, err := range errs {
			if (err != nil) != (i == 9) {
				t.Errorf("errs[%d] = %v", i, err)
			}
		}
		if len(errs) != 20 || !strings.Contains(errs[9].Error(), "spell:s20-9") {
			t.Errorf("errs = %v; want the failure of message 9, naming its key", errs)
		}
	})
	t.Run("no ack within the timeout", func(t *testing.T) {
		start := time.Now()
		errs := ingest.PublishAll(ctx, js, msgs(10, map[int]string{2: "silent.x"}), fast)
		if len(errs) != 10 || errs[2] == nil || !strings.Contains(errs[2].Error(), "no ack within") {
			t.Fatalf("errs = %v; want message 2 to fail for want of an ack", errs)
		}
		// The rest of the window was acked before the timeout: they count.
		for i, err := range errs {
			if i != 2 && err != nil {
				t.Errorf("errs[%d] = %v, want nil", i, err)
			}
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %s; the ack timeout did not apply", d)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		errs := ingest.PublishAll(cctx, js, msgs(3, nil), fast)
		for i := range 3 {
			if len(errs) != 3 || !errors.Is(errs[i], context.Canceled) {
				t.Fatalf("errs = %v, want context.Canceled for each", errs)
			}
		}
	})
}
