package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"

	"lorekeeper.dev/query"
)

// The credentials a data directory holds, made on first start and kept
// for the processes that reach its services: files readable by their
// owner alone, in <data-dir>/credentials.
const (
	credentialsDir = "credentials"
	// natsToken is what the embedded NATS of lorekeeper up requires of
	// every client: whoever holds it can read and rewrite the stream, the
	// resync state and the homebrew bucket.
	natsToken = "nats.token"
	// grpcToken is what the query service requires of every call but
	// health checks: whoever holds it can ask anything stored.
	grpcToken = "grpc.token"
)

// tokenPath is where dataDir keeps the token called name.
func tokenPath(dataDir, name string) string {
	return filepath.Join(dataDir, credentialsDir, name)
}

// dataToken returns the token called name that dataDir keeps, making it
// the first time (32 random bytes; mode 0600 in a directory of mode 0700).
func dataToken(dataDir, name string) (string, error) {
	dir := filepath.Join(dataDir, credentialsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("credentials: %w", err)
	}
	// Made by an older version, or copied with wider modes: only the
	// owner may read what the tokens let in.
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("credentials: %w", err)
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("credentials: %w", err)
		}
		return readToken(path)
	case err != nil:
		return "", fmt.Errorf("credentials: %w", err)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	tok := base64.RawURLEncoding.EncodeToString(b)
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("credentials: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("credentials: %w", err)
	}
	return tok, nil
}

// readToken reads a token file; an empty one is an error, never "no
// token".
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty: put the token in it", path)
	}
	return tok, nil
}

// serviceToken is the token a service requires: the one in file when
// given, else the one dataDir keeps (made on first start).
func serviceToken(file, dataDir, name string) (string, error) {
	if file != "" {
		return readToken(file)
	}
	return dataToken(dataDir, name)
}

// tokenOption sends tok with every call of a gRPC client ("" : nothing).
func tokenOption(tok string) []grpc.DialOption {
	if tok == "" {
		return nil
	}
	return []grpc.DialOption{grpc.WithPerRPCCredentials(query.TokenCredentials(tok))}
}

// dirToken sends the query service token a data directory keeps with
// every call, read at each call: a process sharing the owner's service
// may start before the owner has made it.
type dirToken string

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (d dirToken) GetRequestMetadata(ctx context.Context, uri ...string) (map[string]string, error) {
	tok, err := readToken(tokenPath(string(d), grpcToken))
	if err != nil {
		return nil, nil // the owner has none yet: the call says what it needs
	}
	return query.TokenCredentials(tok).GetRequestMetadata(ctx, uri...)
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (dirToken) RequireTransportSecurity() bool { return false }
