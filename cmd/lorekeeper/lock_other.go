//go:build !unix && !windows

package main

import "os"

// tryLock has no advisory lock to take here: the data stays safe because
// Badger locks its own directory, but a second process is refused by
// Badger's error rather than offered the first one's service.
func tryLock(*os.File) error { return nil }

// processExiting: without an advisory lock there is nothing to wait for.
func processExiting(int) bool { return false }
