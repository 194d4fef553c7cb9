package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestFlagSet_Environment(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		wantDir string
		wantInt time.Duration
		wantErr string
	}{
		{name: "defaults", wantDir: "./data", wantInt: 24 * time.Hour},
		{name: "environment", env: map[string]string{"LOREKEEPER_DATA_DIR": "/srv/lk", "LOREKEEPER_RESYNC_INTERVAL": "6h"}, wantDir: "/srv/lk", wantInt: 6 * time.Hour},
		{name: "flag beats environment", env: map[string]string{"LOREKEEPER_DATA_DIR": "/srv/lk"}, args: []string{"--data-dir", "/tmp/x"}, wantDir: "/tmp/x", wantInt: 24 * time.Hour},
		{name: "bad environment value", env: map[string]string{"LOREKEEPER_RESYNC_INTERVAL": "daily"}, wantErr: "LOREKEEPER_RESYNC_INTERVAL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var cfg upConfig
			fs := newFlagSet("up", upUsage, io.Discard)
			cfg.register(fs)
			err := fs.parse(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.dataDir != tt.wantDir || cfg.ingest.interval != tt.wantInt {
				t.Errorf("data dir %q, interval %v; want %q, %v", cfg.dataDir, cfg.ingest.interval, tt.wantDir, tt.wantInt)
			}
		})
	}
}
