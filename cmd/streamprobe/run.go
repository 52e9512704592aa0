package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/daemon"
	"github.com/streamprobe/streamprobe/internal/configsrc"
	"github.com/streamprobe/streamprobe/internal/jobs"
)

const defaultConfig = "/etc/streamprobe/probe.toml"

func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", defaultConfig, "the TOML config file (see probe.example.toml)")
}

// noteDefaultConfig says, as the first line on stderr, that cmd reads the
// default config because fs had no -config.
func noteDefaultConfig(fs *flag.FlagSet, stderr io.Writer) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "config" })
	if !given {
		fmt.Fprintf(stderr, "streamprobe %s: no -config given: reading the default %s\n", fs.Name(), defaultConfig)
	}
}

// parseFlags parses a subcommand's flags. -h prints the usage to stdout
// and exits 0; a bad flag prints one line and a hint to stderr and exits
// 2.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, usage string) (int, bool) {
	var out strings.Builder
	fs.SetOutput(&out)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, usage)
		fs.PrintDefaults()
		return exitOK, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "streamprobe %s: %v (see 'streamprobe %s -h')\n", fs.Name(), err, fs.Name())
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "streamprobe %s: unexpected argument %q (see 'streamprobe %s -h')\n", fs.Name(), fs.Arg(0), fs.Name())
		return exitUsage, false
	}
	return 0, true
}

// newLogger builds the daemon's log: JSON under systemd (or when asked),
// text otherwise. level takes c's level, and can be changed later (a
// reload).
func newLogger(c config.Log, w io.Writer, level *slog.LevelVar) *slog.Logger {
	setLevel(level, c)
	opts := &slog.HandlerOptions{Level: level}
	format := c.Format
	if format == "auto" {
		format = "text"
		if os.Getenv("INVOCATION_ID") != "" || os.Getenv("JOURNAL_STREAM") != "" {
			format = "json"
		}
	}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func setLevel(v *slog.LevelVar, c config.Log) {
	var level slog.Level
	level.UnmarshalText([]byte(c.Level))
	v.Set(level)
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	path := configFlag(fs)
	sf := addSourceFlags(fs, true)
	if code, ok := parseFlags(fs, args, stdout, stderr, `Usage: streamprobe run [-config FILE|URL]

Runs the probe daemon: every sample and drill of every target on its
schedule, metrics pushed to [push].url and served on listen's /metrics.
Without -config it reads `+defaultConfig+`, and its first
line says so.

-config may be an https:// URL (or http:// on loopback) that a fleet's
hosts share: it is fetched at the start and every -config-poll (with
If-None-Match and If-Modified-Since), and a changed config that loads
replaces the running one whole; one that cannot be fetched or does not
load leaves the running one in force, named in /healthz and the metrics.
The last config applied is kept in -config-cache: a start while the
config server is down, or serves a bad config, starts with it.

Nothing starts before the config and the listen address are known good:
a bad config exits 2, a listen address in use exits 1, each with one line.
A missing results_log directory is created (mode 0750) when this user
can; else the line says what to create.

SIGHUP reloads the config (a URL: fetches it now) and applies all of it
(targets, push, results_log reopened, listen, labels, budgets,
max_concurrent, log.level) or, when it cannot, none of it: the old one
keeps running. A reload starts no run of a job already scheduled:
logrotate's reload only reopens the results log. SIGTERM or SIGINT stops
scheduling, cancels the runs in flight, pushes once more and exits 0.

Flags:
`); !ok {
		return code
	}
	noteDefaultConfig(fs, stderr)
	src, err := sf.source(*path)
	if err != nil {
		printErr(stderr, "run", err)
		return exitUsage
	}
	first, notes, err := firstConfig(ctx, src, os.Getenv)
	if err != nil && !errors.Is(err, errFromCache) {
		printErr(stderr, "run", err)
		return exitUsage
	}
	cfg := first.cfg
	var ln net.Listener
	if cfg.Listen != "" {
		if ln, err = daemon.Listen(cfg.Listen); err != nil {
			printErr(stderr, "run", err)
			return exitFail
		}
	}
	level := new(slog.LevelVar)
	log := newLogger(cfg.Log, stderr, level)
	d := daemon.New(cfg, log)
	d.Listener = ln
	d.Reloaded = func(nc *config.Config) { setLevel(level, nc.Log) }
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	reload := make(chan *config.Config)
	log.Info("streamprobe starting", "config", src.Name(), "targets", len(cfg.Targets), "region", cfg.Region, "host", cfg.Host)
	if src.IsURL() {
		p := &poller{src: src, d: d, log: log, getenv: os.Getenv, reload: reload, pending: map[*config.Config][]byte{}}
		d.Reloaded = func(nc *config.Config) { setLevel(level, nc.Log); p.applied(nc) }
		d.ConfigFromURL(src.Name(), sf.poll)
		startFromURL(p, first, notes)
		go p.loop(ctx, sf.poll, hup)
	} else {
		go reloadFile(ctx, src, d, hup, reload)
	}
	if err := d.Run(ctx, reload); err != nil {
		log.Error("streamprobe stopped", "err", err)
		return exitFail
	}
	log.Info("streamprobe stopped")
	return exitOK
}

// startFromURL notes how the first config of a URL was had: fetched (and
// kept as the last good copy), or from the cache, and why.
func startFromURL(p *poller, first loaded, notes []string) {
	if len(notes) == 0 {
		p.d.ConfigFetched(nil, time.Now())
		p.keep(first.text)
		return
	}
	// The fetch failed, or what it brought did not load: the cached copy
	// runs, and /healthz says why.
	p.log.Warn("the config at its URL cannot be used: "+notes[1], "config", p.src.Name(), "err", notes[0])
	if strings.HasPrefix(notes[0], "fetch ") {
		p.d.ConfigFetched(errors.New(notes[0]), time.Now())
	} else {
		p.d.ConfigFetched(nil, time.Now())
		p.d.ReloadFailed(errors.New(notes[0]))
	}
}

// reloadFile loads the config file again at every SIGHUP and hands it to
// the daemon, or tells the daemon why it did not load.
func reloadFile(ctx context.Context, src *configsrc.Source, d *daemon.Daemon, hup <-chan os.Signal, reload chan<- *config.Config) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			f, err := src.Fetch(ctx)
			var nc *config.Config
			if err == nil {
				nc, err = parseChecked(src, f.Text, os.Getenv)
			}
			if err != nil {
				d.ReloadFailed(err)
				continue
			}
			select {
			case reload <- nc:
			case <-ctx.Done():
				return
			}
		}
	}
}

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	path := configFlag(fs)
	sf := addSourceFlags(fs, false)
	if code, ok := parseFlags(fs, args, stdout, stderr, `Usage: streamprobe validate [-config FILE|URL]

Checks a config file: syntax, unknown keys, types, values, that every
secret it names is set, and every check run makes before it starts (the
listen address parses, the results log can be appended to, each schedule
with its jitter is a valid duration): a file validate accepts, run starts.
Prints every problem it finds, one a line with its file, line and key, and
exits 2 (a file that does not parse as TOML stops at its first error); exits 0
when the file is good. Without -config it reads `+defaultConfig+`,
and its first line says so. A URL (as run takes it) is fetched once and
checked as a file, its problems named by the URL, line and key.

Flags:
`); !ok {
		return code
	}
	noteDefaultConfig(fs, stderr)
	src, err := sf.source(*path)
	if err != nil {
		printErr(stderr, "validate", err)
		return exitUsage
	}
	f, err := src.Fetch(context.Background())
	if err != nil {
		printErr(stderr, "validate", err)
		return exitUsage
	}
	cfg, err := config.Parse(src.Name(), f.Text, jobs.Env(os.Getenv))
	if err != nil {
		printErr(stderr, "validate", err)
		return exitUsage
	}
	jobs, err := daemon.Check(cfg, os.Getenv)
	if err != nil {
		printErr(stderr, "validate", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "%s: ok (%d targets, %d jobs)\n", src.Name(), len(cfg.Targets), len(jobs))
	return exitOK
}

// printErr writes err to stderr, one line per problem (a config with
// several has one line each), each prefixed with the command.
func printErr(stderr io.Writer, cmd string, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(stderr, "streamprobe %s: %s\n", cmd, line)
	}
}
