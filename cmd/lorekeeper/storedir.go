package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// checkStoreDir says plainly what the stores would say obscurely: that
// this user may not read or write dir (the embedded NATS server reports
// a store it cannot look into as "not a directory"). A dir that does not
// exist yet is fine: the store creates it.
func checkStoreDir(dir string) error {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		_, err = f.Readdirnames(1)
		f.Close()
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err == nil {
		var tmp *os.File
		if tmp, err = os.CreateTemp(dir, ".lorekeeper-write-check-*"); err == nil {
			tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied: run LoreKeeper as the user that owns it, or give this user read and write access to it (chown or chmod)", dir)
	}
	return fmt.Errorf("%s: %w", dir, err)
}

// badgerAdvice adds what to do to an error opening the Badger store in
// dir: stop the other process holding it, fix its permissions, or delete
// it, since the node rebuilds a missing store from the stream. Errors not
// about dir pass unchanged.
func badgerAdvice(err error, dir string) error {
	msg := err.Error()
	switch {
	case !strings.Contains(msg, dir):
		return err
	case strings.Contains(msg, "Cannot acquire directory lock"):
		return fmt.Errorf("%w: another process (a LoreKeeper node, up or mcp --standalone) uses %s: stop it, or give this one its own --data-dir", err, dir)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: run LoreKeeper as the user that owns %s, or give this user read and write access to it (chown or chmod)", err, dir)
	}
	return fmt.Errorf("%w: delete %s to rebuild it from the stream", err, dir)
}
