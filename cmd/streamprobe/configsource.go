package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/daemon"
	"github.com/streamprobe/streamprobe/internal/configsrc"
	"github.com/streamprobe/streamprobe/internal/jobs"
)

// The defaults of a config from a URL.
const (
	defaultConfigPoll  = time.Minute
	defaultConfigCache = "/var/lib/streamprobe"
)

// sourceFlags are the flags of a config from a URL: how the config server
// is asked (every command that reads -config), and for run how often and
// where the last good copy is kept.
type sourceFlags struct {
	opts configsrc.Options
	poll time.Duration
}

// addSourceFlags adds the config server's flags to fs; withPoll adds
// run's -config-poll and -config-cache too.
func addSourceFlags(fs *flag.FlagSet, withPoll bool) *sourceFlags {
	f := &sourceFlags{}
	fs.StringVar(&f.opts.BearerFile, "config-bearer-file", "", "with an https:// -config: a file holding a bearer token for the config server (read at every fetch)")
	fs.StringVar(&f.opts.CertFile, "config-cert", "", "with an https:// -config: a client certificate (PEM) for the config server")
	fs.StringVar(&f.opts.KeyFile, "config-key", "", "with -config-cert: its private key (PEM)")
	fs.StringVar(&f.opts.CAFile, "config-ca", "", "with an https:// -config: the CA certificates (PEM) the config server's certificate is checked against (default: the system's)")
	fs.DurationVar(&f.opts.Timeout, "config-timeout", configsrc.DefaultTimeout, "with a URL -config: the bound on one fetch")
	if withPoll {
		fs.DurationVar(&f.poll, "config-poll", defaultConfigPoll, "with a URL -config: how often the config is fetched again (If-None-Match / If-Modified-Since)")
		fs.StringVar(&f.opts.CacheDir, "config-cache", defaultConfigCache, "with a URL -config: the directory that keeps the last good config, read at a start while the config server is down (\"\" keeps none)")
	}
	return f
}

// source checks -config (a file or a URL) and the source flags.
func (f *sourceFlags) source(loc string) (*configsrc.Source, error) {
	if f.poll < 0 || (f.poll == 0 && f.opts.CacheDir != "" && configsrc.IsURL(loc)) {
		return nil, fmt.Errorf("-config-poll %s: want a positive duration", f.poll)
	}
	if f.opts.Timeout <= 0 {
		return nil, fmt.Errorf("-config-timeout %s: want a positive duration", f.opts.Timeout)
	}
	return configsrc.New(loc, f.opts)
}

// loaded is a config, the text it was parsed from, and how it was had.
type loaded struct {
	cfg     *config.Config
	text    []byte
	fetched configsrc.Fetched
}

// parseChecked parses text from src and makes every check run makes
// (config.Parse, then daemon.Check with getenv's secrets): errors name
// the file or the URL, its line and the key.
func parseChecked(src *configsrc.Source, text []byte, getenv func(string) string) (*config.Config, error) {
	cfg, err := config.Parse(src.Name(), text, jobs.Env(getenv))
	if err == nil {
		_, err = daemon.Check(cfg, getenv)
	}
	return cfg, err
}

// readConfig fetches the config at loc once (a file, or a URL with no
// credentials and no cache: check and report) and parses it with getenv's
// secrets (nil: none looked up).
func readConfig(ctx context.Context, loc string, getenv func(string) string) (*config.Config, error) {
	src, err := configsrc.New(loc, configsrc.Options{})
	if err != nil {
		return nil, err
	}
	f, err := src.Fetch(ctx)
	if err != nil {
		return nil, err
	}
	return config.Parse(src.Name(), f.Text, jobs.Env(getenv))
}

// firstConfig is the config run starts with: the file's, or the URL's as
// fetched now. When the URL cannot be fetched, or what it serves does not
// load, it is the last good copy from the cache (a host restarting while
// the config server is down keeps probing), and notes say why; without
// one, the error.
func firstConfig(ctx context.Context, src *configsrc.Source, getenv func(string) string) (loaded, []string, error) {
	f, err := src.Fetch(ctx)
	var cfg *config.Config
	if err == nil {
		if cfg, err = parseChecked(src, f.Text, getenv); err == nil {
			return loaded{cfg: cfg, text: f.Text, fetched: f}, nil, nil
		}
	}
	if !src.IsURL() {
		return loaded{}, nil, err
	}
	c, cerr := src.Cached()
	if cerr != nil {
		return loaded{}, nil, err
	}
	ccfg, perr := parseChecked(src, c.Text, getenv)
	if perr != nil {
		return loaded{}, nil, err
	}
	notes := []string{err.Error(), fmt.Sprintf("starting with the last good config, cached at %s", c.SavedAt.UTC().Format(time.RFC3339))}
	return loaded{cfg: ccfg, text: c.Text, fetched: c}, notes, errFromCache
}

// errFromCache says firstConfig's config is the cached copy.
var errFromCache = errors.New("the cached config")

// poller fetches a URL config every poll (and at once on a SIGHUP) and
// hands each new one that loads to the daemon; it keeps the last one
// the daemon applied as the cached copy.
type poller struct {
	src    *configsrc.Source
	d      *daemon.Daemon
	log    *slog.Logger
	getenv func(string) string
	reload chan<- *config.Config

	mu      sync.Mutex
	pending map[*config.Config][]byte // configs handed over, by text, until applied
}

// applied is the daemon's Reloaded hook: nc is now running, so its text
// is the last good copy.
func (p *poller) applied(nc *config.Config) {
	p.mu.Lock()
	text, ok := p.pending[nc]
	p.pending = map[*config.Config][]byte{}
	p.mu.Unlock()
	if ok {
		p.keep(text)
	}
}

func (p *poller) keep(text []byte) {
	if err := p.src.Keep(text); err != nil {
		p.log.Warn("the config cache could not be written: a restart while the config server is down will not find this config", "err", err)
	}
}

// once fetches the config and hands it over when it changed and loads; a
// fetch that fails, or a config that does not load, leaves the running
// one in force and is named in /healthz and the metrics.
func (p *poller) once(ctx context.Context) {
	f, err := p.src.Fetch(ctx)
	if ctx.Err() != nil {
		return
	}
	p.d.ConfigFetched(err, time.Now())
	if err != nil {
		p.log.Warn("config fetch failed; the running config stays", "err", err)
		return
	}
	if f.NotModified {
		p.log.Debug("config not modified", "config", p.src.Name())
		return
	}
	nc, err := parseChecked(p.src, f.Text, p.getenv)
	if err != nil {
		p.d.ReloadFailed(err)
		return
	}
	p.mu.Lock()
	p.pending[nc] = f.Text
	p.mu.Unlock()
	p.log.Info("config changed at its URL: reloading", "config", p.src.Name())
	select {
	case p.reload <- nc:
	case <-ctx.Done():
	}
}

// loop polls every interval and at every value on now (SIGHUP) until ctx
// ends.
func (p *poller) loop(ctx context.Context, every time.Duration, now <-chan os.Signal) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-now:
		}
		p.once(ctx)
	}
}
