package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// lockName is the file in a data directory that the process owning the
// directory holds locked: NATS's store and Badger allow one process each.
const lockName = "lorekeeper.lock"

// errLocked: another process owns the data directory.
var errLocked = errors.New("another LoreKeeper process owns the data directory")

// lockInfo is what the owner writes into the lock file, so that other
// processes can find its query service instead of opening the data.
type lockInfo struct {
	PID      int       `json:"pid"`
	Command  string    `json:"command"`
	GRPCAddr string    `json:"grpc_addr,omitempty"`
	Started  time.Time `json:"started"`
}

// dataLock is a held lock on a data directory; the OS releases it when the
// process exits, however it exits.
type dataLock struct {
	f    *os.File
	info lockInfo
}

// lockDataDir takes the data directory's lock, or returns errLocked (and
// what the owner wrote) when another process holds it.
func lockDataDir(dir, command string) (*dataLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, errLocked
		}
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	l := &dataLock{f: f, info: lockInfo{PID: os.Getpid(), Command: command, Started: time.Now().UTC()}}
	return l, l.write()
}

// setGRPCAddr records the query service's address for other processes.
func (l *dataLock) setGRPCAddr(addr string) error {
	l.info.GRPCAddr = addr
	return l.write()
}

func (l *dataLock) write() error {
	b, _ := json.Marshal(l.info)
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("data directory lock: %w", err)
	}
	if _, err := l.f.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("data directory lock: %w", err)
	}
	return nil
}

// release empties and unlocks the file; it stays, so that a process
// waiting to read it never finds it missing.
func (l *dataLock) release() {
	_ = l.f.Truncate(0)
	_ = l.f.Close()
}

// readLock returns what the owner of dir wrote, and whether the lock is
// held right now (a crashed owner leaves its last words behind, unlocked).
func readLock(dir string) (lockInfo, bool) {
	var info lockInfo
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR, 0)
	if err != nil {
		return info, false
	}
	defer f.Close()
	held := errors.Is(tryLock(f), errLocked)
	b, err := os.ReadFile(f.Name())
	if err == nil && len(b) > 0 {
		_ = json.Unmarshal(b, &info)
	}
	return info, held
}

// exitWait bounds how long ownDataDir waits for an owner that is exiting
// to let go of the lock (a process killed with SIGKILL holds it until the
// kernel has torn down its memory, which for a large Badger store takes a
// moment).
const exitWait = 10 * time.Second

// ownDataDir takes dir's lock for command, or says who holds it. An owner
// that is exiting is waited for, up to exitWait.
func ownDataDir(dir, command string) (*dataLock, error) {
	l, err := lockDataDir(dir, command)
	for deadline := time.Now().Add(exitWait); errors.Is(err, errLocked) && time.Now().Before(deadline); {
		if info, _ := readLock(dir); !processExiting(info.PID) {
			break
		}
		time.Sleep(50 * time.Millisecond)
		l, err = lockDataDir(dir, command)
	}
	if errors.Is(err, errLocked) {
		info, _ := readLock(dir)
		return nil, fmt.Errorf("the data directory %s is in use by LoreKeeper process %d (lorekeeper %s, since %s): stop it, or give this one another --data-dir: %w",
			dir, info.PID, info.Command, info.Started.Local().Format(time.DateTime), err)
	}
	return l, err
}

// findLocalService points cf at the query service of the process that owns
// the default data directory (a standalone MCP server, or lorekeeper up
// without --data-dir), unless --grpc-addr was given: a standalone process listens on a port of
// its choosing, which it writes in its lock file. It returns the owner,
// and whether it is a standalone process (whose NATS has no listener).
func findLocalService(fs *flagSet, cf *clientFlags) (lockInfo, bool) {
	if fs.isSet("grpc-addr") {
		return lockInfo{}, false
	}
	info, held := readLock(defaultDataDir())
	if !held || info.GRPCAddr == "" {
		return lockInfo{}, false
	}
	cf.addr = info.GRPCAddr
	return info, info.Command == standaloneCommand
}
