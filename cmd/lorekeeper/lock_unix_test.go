//go:build linux

package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// processExiting tells a live owner of the data directory from one that
// is ending, whose lock is about to be released.
func TestProcessExiting(t *testing.T) {
	if processExiting(os.Getpid()) {
		t.Error("this process counts as exiting")
	}
	if processExiting(0) {
		t.Error("pid 0 counts as exiting")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if processExiting(pid) {
		t.Error("a sleeping child counts as exiting")
	}
	// Killed and not yet waited for: a zombie.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !processExiting(pid) {
		if time.Now().After(deadline) {
			t.Fatal("a killed child never counts as exiting")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Wait()
	if !processExiting(pid) {
		t.Error("a child that is gone does not count as exiting")
	}
}
