package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
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
		wantOrc string
		wantInt time.Duration
		wantErr string
	}{
		{name: "defaults", env: map[string]string{"XDG_DATA_HOME": "/xdg"}, wantDir: "/xdg/lorekeeper", wantOrc: "/xdg/lorekeeper/orcbrew", wantInt: 24 * time.Hour},
		{name: "home", env: map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": ""}, wantDir: "/home/u/.local/share/lorekeeper", wantOrc: "/home/u/.local/share/lorekeeper/orcbrew", wantInt: 24 * time.Hour},
		{name: "relative XDG_DATA_HOME is ignored", env: map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "rel"}, wantDir: "/home/u/.local/share/lorekeeper", wantOrc: "/home/u/.local/share/lorekeeper/orcbrew", wantInt: 24 * time.Hour},
		{name: "orcbrew follows the data dir", args: []string{"--data-dir", "./data"}, wantDir: "./data", wantOrc: "data/orcbrew", wantInt: 24 * time.Hour},
		{name: "orcbrew set", args: []string{"--data-dir", "./data", "--orcbrew-dir", "./orcbrew"}, wantDir: "./data", wantOrc: "./orcbrew", wantInt: 24 * time.Hour},
		{name: "orcbrew disabled", env: map[string]string{"LOREKEEPER_ORCBREW_DIR": ""}, args: []string{"--data-dir", "/d"}, wantDir: "/d", wantOrc: "", wantInt: 24 * time.Hour},
		{name: "environment", env: map[string]string{"LOREKEEPER_DATA_DIR": "/srv/lk", "LOREKEEPER_RESYNC_INTERVAL": "6h"}, wantDir: "/srv/lk", wantOrc: "/srv/lk/orcbrew", wantInt: 6 * time.Hour},
		{name: "flag beats environment", env: map[string]string{"LOREKEEPER_DATA_DIR": "/srv/lk"}, args: []string{"--data-dir", "/tmp/x"}, wantDir: "/tmp/x", wantOrc: "/tmp/x/orcbrew", wantInt: 24 * time.Hour},
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
			cfg.resolve(fs)
			if cfg.dataDir != tt.wantDir || cfg.ingest.orcbrewDir != tt.wantOrc || cfg.ingest.interval != tt.wantInt {
				t.Errorf("data dir %q, orcbrew dir %q, interval %v; want %q, %q, %v", cfg.dataDir, cfg.ingest.orcbrewDir, cfg.ingest.interval, tt.wantDir, tt.wantOrc, tt.wantInt)
			}
		})
	}
}

func TestMCPHTTPFlags_Bearer(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    string
		wantErr string
	}{
		{name: "no token: no authentication", want: ""},
		{name: "token file", args: []string{"--mcp-token-file", file("ok", "s3cret\n")}, want: "s3cret"},
		{name: "token file with spaces around", args: []string{"--mcp-token-file", file("spaced", " \ts3cret \r\n")}, want: "s3cret"},
		{name: "token flag", args: []string{"--mcp-token", "s3cret"}, want: "s3cret"},
		{name: "token variable", env: map[string]string{"LOREKEEPER_MCP_TOKEN": "s3cret"}, want: "s3cret"},
		{name: "empty token file", args: []string{"--mcp-token-file", file("empty", "")}, wantErr: "--mcp-token-file"},
		{name: "blank token file", args: []string{"--mcp-token-file", file("blank", " \t\r\n\n")}, wantErr: "--mcp-token-file"},
		{name: "empty token variable", env: map[string]string{"LOREKEEPER_MCP_TOKEN": ""}, wantErr: "LOREKEEPER_MCP_TOKEN"},
		{name: "blank token variable", env: map[string]string{"LOREKEEPER_MCP_TOKEN": "  \t"}, wantErr: "LOREKEEPER_MCP_TOKEN"},
		{name: "empty token flag", args: []string{"--mcp-token="}, wantErr: "--mcp-token"},
		{name: "empty token file variable", env: map[string]string{"LOREKEEPER_MCP_TOKEN_FILE": file("empty2", "\n")}, wantErr: "--mcp-token-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var m mcpHTTPFlags
			fs := newFlagSet("mcp", "", io.Discard)
			m.register(fs)
			if err := fs.parse(tt.args); err != nil {
				t.Fatal(err)
			}
			// Only a token on the command line draws the deprecation warning.
			onCmdline := slices.ContainsFunc(tt.args, func(a string) bool { return a == "--mcp-token" || strings.HasPrefix(a, "--mcp-token=") })
			if m.token.onCommandLine != onCmdline {
				t.Errorf("token on the command line: %v, want %v", m.token.onCommandLine, onCmdline)
			}
			got, err := m.bearer()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("token %q, err %v; want an error naming %s", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("token %q, err %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestFlagSet_ByteSize(t *testing.T) {
	tests := []struct {
		env, arg string
		want     int64
		wantErr  bool
	}{
		{want: 16 << 20},
		{arg: "1048576", want: 1 << 20},
		{arg: "20MiB", want: 20 << 20},
		{arg: "512 KB", want: 512 << 10},
		{env: "2GiB", want: 2 << 30},
		{env: "1MiB", arg: "3MiB", want: 3 << 20},
		{arg: "0", wantErr: true},
		{arg: "-5MiB", wantErr: true},
		{arg: "lots", wantErr: true},
		{env: "16 megs", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.env+"|"+tt.arg, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("LOREKEEPER_ORCBREW_MAX_SIZE", tt.env)
			}
			var got int64
			fs := newFlagSet("x", "", io.Discard)
			fs.ByteSize(&got, "orcbrew-max-size", 16<<20, "")
			var args []string
			if tt.arg != "" {
				args = []string{"--orcbrew-max-size", tt.arg}
			}
			err := fs.parse(args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}
