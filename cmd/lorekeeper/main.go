package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `lorekeeper: D&D 5e content for AI assistants, cited and fast.

Usage: lorekeeper <command> [flags]

Run it:
  up        everything in one process: embedded NATS, Open5e sync, OrcBrew
            folder, embedder, query service, MCP over HTTP (what make run starts)
  node      embedder + storage + query service, against a NATS server
  ingest    the Open5e resync schedule and the OrcBrew bucket watcher
  mcp       the MCP server for AI assistants: stdio (default) or --http;
            mcp --standalone runs everything in one process on stdio (what
            desktop clients such as Claude Desktop should start)

Content:
  sync      resync Open5e now, with progress
  import    put OrcBrew files (FILE or DIR) into the watched bucket
  model     fetch the runtime and default model (lorekeeper model fetch), or
            pull another: lorekeeper model pull minilm-l6-v2

Ask it:
  search    search everything:  lorekeeper search "fire damage"
  get       one entity by key:  lorekeeper get open5e_v2:srd-2014:spell:fireball
  docs      the source documents and their entity counts
  status    what this node holds, and the state of sync and imports

Run "lorekeeper <command> --help" for a command's flags. Every flag can also be
set by an environment variable: --data-dir is LOREKEEPER_DATA_DIR.
`

func main() {
	// The first signal cancels ctx and starts a graceful shutdown; a second
	// one restores the default action and kills the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "lorekeeper:", err)
		os.Exit(1)
	}
}

// errUsage marks an error already explained to the user on stderr.
var errUsage = errors.New("usage")

// run dispatches a command line; tests call it as the binary would.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "up":
		return runUp(ctx, rest, stdout, stderr)
	case "node":
		return runNode(ctx, rest, stderr)
	case "ingest":
		return runIngest(ctx, rest, stderr)
	case "mcp":
		return runMCP(ctx, rest, stdin, stdout, stderr)
	case "sync":
		return runSync(ctx, rest, stdout, stderr)
	case "import":
		return runImport(ctx, rest, stdout, stderr)
	case "model":
		return runModel(ctx, rest, stdout, stderr)
	case "search":
		return runSearch(ctx, rest, stdout, stderr)
	case "get":
		return runGet(ctx, rest, stdout, stderr)
	case "docs":
		return runDocs(ctx, rest, stdout, stderr)
	case "status":
		return runStatus(ctx, rest, stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "lorekeeper", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "lorekeeper: unknown command %q\n\n%s", cmd, usage)
		return errUsage
	}
}
