package main

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestDataLock(t *testing.T) {
	dir := t.TempDir()
	l, err := lockDataDir(dir, "up")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.setGRPCAddr("127.0.0.1:27001"); err != nil {
		t.Fatal(err)
	}

	// A second owner is refused, and told who holds the directory.
	if _, err := lockDataDir(dir, "node"); !errors.Is(err, errLocked) {
		t.Fatalf("second lockDataDir = %v, want errLocked", err)
	}
	_, err = ownDataDir(dir, "node")
	if !errors.Is(err, errLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) || !strings.Contains(err.Error(), "lorekeeper up") {
		t.Errorf("ownDataDir on a held directory = %v, want errLocked naming this process and its command", err)
	}
	info, held := readLock(dir)
	if !held || info.GRPCAddr != "127.0.0.1:27001" || info.PID != os.Getpid() || info.Command != "up" {
		t.Errorf("readLock = %+v, held %v; want held by this process, up, at 127.0.0.1:27001", info, held)
	}

	// Released, it is free again and names no address.
	l.release()
	if info, held := readLock(dir); held || info.GRPCAddr != "" {
		t.Errorf("readLock after release = %+v, held %v; want free and empty", info, held)
	}
	l2, err := lockDataDir(dir, "node")
	if err != nil {
		t.Fatalf("lockDataDir after release: %v", err)
	}
	l2.release()
}

func TestIsStandalone(t *testing.T) {
	tests := []struct {
		args []string
		env  string
		want bool
	}{
		{nil, "", false},
		{[]string{"--standalone"}, "", true},
		{[]string{"-standalone"}, "", true},
		{[]string{"--standalone=false"}, "", false},
		{[]string{"--http", "--standalone=true"}, "", true},
		{[]string{"--", "--standalone"}, "", false},
		{nil, "true", true},
		{[]string{"--standalone=false"}, "true", false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+" env="+tt.env, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("LOREKEEPER_STANDALONE", tt.env)
			}
			if got := isStandalone(tt.args); got != tt.want {
				t.Errorf("isStandalone(%q) = %v, want %v", tt.args, got, tt.want)
			}
		})
	}
}
