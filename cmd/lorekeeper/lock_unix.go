//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// tryLock takes an exclusive advisory lock on f without waiting. Closing f
// (or the process ending) releases it.
func tryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

// processExiting reports whether process pid has ended or is ending: it is
// gone, a zombie, or flagged PF_EXITING by the kernel (Linux's
// /proc/<pid>/stat; elsewhere only a process that is gone counts).
func processExiting(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ppid pgrp session tty_nr tpgid flags ...; comm may
	// hold spaces and parentheses, so fields count from its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 7 {
		return false
	}
	if f[0] == "Z" || f[0] == "X" || f[0] == "x" {
		return true
	}
	const pfExiting = 0x4
	flags, err := strconv.ParseUint(f[6], 10, 64)
	return err == nil && flags&pfExiting != 0
}
