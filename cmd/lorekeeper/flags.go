package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// flagSet wraps flag.FlagSet so that every flag has a LOREKEEPER_* environment
// variable: the variable sets the default, the flag overrides it, and the
// help text names both.
type flagSet struct {
	*flag.FlagSet
	usage string
	// envErr is the first environment variable that did not parse.
	envErr error
}

func newFlagSet(name, usage string, stderr io.Writer) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), usage: usage}
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\n\nFlags (each also set by the environment variable shown):\n", strings.TrimSpace(fs.usage))
		fs.PrintDefaults()
	}
	return fs
}

// envName is the environment variable for a flag: --grpc-addr is
// LOREKEEPER_GRPC_ADDR.
func envName(flagName string) string {
	return "LOREKEEPER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (fs *flagSet) env(name string) (string, bool) {
	return os.LookupEnv(envName(name))
}

func (fs *flagSet) help(name, usage string) string {
	return usage + " [$" + envName(name) + "]"
}

func (fs *flagSet) String(p *string, name, def, usage string) {
	if v, ok := fs.env(name); ok {
		def = v
	}
	fs.StringVar(p, name, def, fs.help(name, usage))
}

// optionalString is a string flag that knows whether it was given at all
// (on the command line or by its variable), so that "given but empty" can
// be told from "not given". Its String is empty: the help never prints it,
// since it may be a secret.
type optionalString struct {
	value string
	set   bool
	// onCommandLine: the value came from the command line, where every
	// local user can read it (ps, /proc), not from the variable.
	onCommandLine bool
}

func (o *optionalString) String() string { return "" }

func (o *optionalString) Set(v string) error {
	o.value, o.set, o.onCommandLine = v, true, true
	return nil
}

// OptionalString registers an optionalString flag; its variable, when
// present (even empty), counts as given.
func (fs *flagSet) OptionalString(p *optionalString, name, usage string) {
	if v, ok := fs.env(name); ok {
		p.value, p.set = v, true
	}
	fs.Var(p, name, fs.help(name, usage))
}

func (fs *flagSet) Bool(p *bool, name string, def bool, usage string) {
	if v, ok := fs.env(name); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fs.setEnvErr(name, v, err)
		} else {
			def = b
		}
	}
	fs.BoolVar(p, name, def, fs.help(name, usage))
}

func (fs *flagSet) Int(p *int, name string, def int, usage string) {
	if v, ok := fs.env(name); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			fs.setEnvErr(name, v, err)
		} else {
			def = n
		}
	}
	fs.IntVar(p, name, def, fs.help(name, usage))
}

func (fs *flagSet) Duration(p *time.Duration, name string, def time.Duration, usage string) {
	if v, ok := fs.env(name); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			fs.setEnvErr(name, v, err)
		} else {
			def = d
		}
	}
	fs.DurationVar(p, name, def, fs.help(name, usage))
}

// byteSize is a size flag: a number of bytes, or with a unit ("16MiB",
// "512KiB", "1GiB"; KB, MB and GB are taken as the binary units too).
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(v string) error {
	n, err := parseByteSize(v)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

func parseByteSize(v string) (int64, error) {
	s := strings.ToUpper(strings.TrimSpace(v))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, e.g. 16MiB", v)
	}
	return n * mult, nil
}

// ByteSize registers a size flag (see byteSize).
func (fs *flagSet) ByteSize(p *int64, name string, def int64, usage string) {
	*p = def
	if v, ok := fs.env(name); ok {
		n, err := parseByteSize(v)
		if err != nil {
			fs.setEnvErr(name, v, err)
		} else {
			*p = n
		}
	}
	fs.Var((*byteSize)(p), name, fs.help(name, usage))
}

func (fs *flagSet) setEnvErr(name, v string, err error) {
	if fs.envErr == nil {
		fs.envErr = fmt.Errorf("%s=%q: %w", envName(name), v, err)
	}
}

// parse parses args and reports a bad environment variable as a usage error.
func (fs *flagSet) parse(args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	return fs.envErr
}
