package main

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"runtime"

	"lorekeeper.dev/embedder/modelfile"
)

// userDataDir is where LoreKeeper keeps a user's data when no --data-dir
// is given: desktop clients start their MCP servers in any directory (often
// / or an app bundle), so a path relative to it would land anywhere.
//
//	Linux and others  $XDG_DATA_HOME/lorekeeper, else ~/.local/share/lorekeeper
//	macOS             ~/Library/Application Support/lorekeeper
//	Windows           %LocalAppData%\lorekeeper
func userDataDir() (string, error) {
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "lorekeeper"), nil
		}
		return "", errors.New("%LocalAppData% is not set")
	case "darwin", "ios":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support", "lorekeeper"), nil
	default:
		// The XDG spec ignores a relative XDG_DATA_HOME.
		if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
			return filepath.Join(d, "lorekeeper"), nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".local", "share", "lorekeeper"), nil
	}
}

// defaultDataDir is the --data-dir default: the user's data directory, or
// ./data where the platform names none (no home directory).
func defaultDataDir() string {
	d, err := userDataDir()
	if err != nil {
		return "data"
	}
	return d
}

// defaultModelDir is the --model-dir default, the first of:
//   - LOREKEEPER_MODEL_DIR (what make exports);
//   - ./.models when it holds the model (a checkout after `make model`);
//   - .models beside the binary's directory when it holds the model (a
//     checkout's bin/lorekeeper started from anywhere, as desktop clients do);
//   - models in the user's data directory, where a missing model is fetched.
func defaultModelDir() string {
	if d := os.Getenv("LOREKEEPER_MODEL_DIR"); d != "" {
		return d
	}
	var candidates []string
	if d, err := filepath.Abs(".models"); err == nil {
		candidates = append(candidates, d)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err := filepath.EvalSymlinks(exe); err == nil {
			candidates = append(candidates, filepath.Join(filepath.Dir(filepath.Dir(exe)), ".models"))
		}
	}
	for _, d := range candidates {
		if modelfile.Installed(d) {
			return d
		}
	}
	return filepath.Join(defaultDataDir(), "models")
}

// isSet reports whether a flag was given on the command line or by its
// environment variable.
func (fs *flagSet) isSet(name string) bool {
	if _, ok := fs.env(name); ok {
		return true
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// resolve fills in the defaults that depend on other flags: the OrcBrew
// folder lives in the data directory unless it is set itself.
func (c *upConfig) resolve(fs *flagSet) {
	if !fs.isSet("orcbrew-dir") {
		c.ingest.orcbrewDir = filepath.Join(c.dataDir, "orcbrew")
	}
}

// absPath is p made absolute, or p when it cannot be.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
