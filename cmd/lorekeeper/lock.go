package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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
	PID      int    `json:"pid"`
	Command  string `json:"command"`
	GRPCAddr string `json:"grpc_addr,omitempty"`
	// NATSURL is where the owner's embedded NATS listens (lorekeeper up).
	NATSURL string    `json:"nats_url,omitempty"`
	Started time.Time `json:"started"`
	// State is what the owner is doing while it starts ("downloading the
	// embedding model: 40 of 112 MB"); empty once its service answers.
	State string `json:"state,omitempty"`
}

// dataLock is a held lock on a data directory; the OS releases it when the
// process exits, however it exits.
type dataLock struct {
	f    *os.File
	mu   sync.Mutex
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
	return l, l.update(func(*lockInfo) {})
}

// setGRPCAddr records the query service's address for other processes.
func (l *dataLock) setGRPCAddr(addr string) error {
	return l.update(func(i *lockInfo) { i.GRPCAddr = addr })
}

// setNATSURL records where the embedded NATS listens, for other processes.
func (l *dataLock) setNATSURL(url string) error {
	return l.update(func(i *lockInfo) { i.NATSURL = url })
}

// setState records what the owner is doing while it starts ("" when done).
func (l *dataLock) setState(state string) error {
	return l.update(func(i *lockInfo) { i.State = state })
}

func (l *dataLock) update(change func(*lockInfo)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	change(&l.info)
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
