package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pelletier/go-toml/v2/unstable"
)

// validateHost makes the checks that `run` would otherwise only meet when
// it starts, so that a file `validate` accepts also starts: the listen
// address parses, the results log can be opened for appending, and every
// schedule plus its jitter is a duration that does not overflow.
func (c *Config) validateHost() error {
	if c.Listen != "" {
		if _, err := net.ResolveTCPAddr("tcp", c.Listen); err != nil {
			var ae *net.AddrError
			if errors.As(err, &ae) {
				err = errors.New(ae.Err)
			}
			return c.errAt("listen", "%q is not a host:port address to listen on: %v", c.Listen, err)
		}
	}
	if c.ResultsLog != "" {
		if err := Writable(c.ResultsLog); err != nil {
			return c.errAt("results_log", "%v", err)
		}
	}
	for i := range c.Targets {
		t := &c.Targets[i]
		for _, s := range []struct {
			key string
			s   Schedule
		}{{"every", t.Every}, {"drill_every", t.DrillEvery}} {
			if s.s.Every > math.MaxInt64-t.Jitter.Duration {
				key := fmt.Sprintf("target[%d].%s", i, s.key)
				if !c.has(key) {
					key = fmt.Sprintf("target[%d].every", i)
				}
				return c.errAt(key, "%s plus jitter (%s) is too long a duration: want at most %s", s.s.Every, t.Jitter.Duration, maxDuration(t.Jitter.Duration))
			}
		}
	}
	return nil
}

// maxDuration is the longest schedule that jitter can be added to.
func maxDuration(jitter time.Duration) time.Duration {
	return (math.MaxInt64 - jitter).Truncate(time.Hour)
}

// Writable reports why path cannot be opened for writing or appending
// (created if missing), without creating it: the results log, and the
// output files of check and report, are checked before anything runs.
func Writable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s is a directory", path)
	case err == nil:
		if syscall.Access(path, 2 /* W_OK */) != nil {
			return fmt.Errorf("%s is not writable", path)
		}
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot use %s: %v", path, unwrapPath(err))
	}
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	if err != nil || !di.IsDir() {
		return fmt.Errorf("directory %s does not exist", dir)
	}
	if syscall.Access(dir, 2|1 /* W_OK|X_OK */) != nil {
		return fmt.Errorf("directory %s is not writable: %s cannot be created", dir, filepath.Base(path))
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// typeError locates a value of the wrong TOML type for a field checked as
// text (a duration, a schedule, a URL) — timeout = 5 — which the decoder
// reports without a line or a key. It returns nil when none is found.
func (c *Config) typeError(b []byte) error {
	fields := map[string]reflect.Type{}
	textFields(reflect.TypeFor[Config](), fields)
	var p unstable.Parser
	p.Reset(b)
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != unstable.KeyValue {
			continue
		}
		parts := keyParts(e)
		v := e.Value()
		if len(parts) == 0 || v == nil || v.Kind == unstable.String {
			continue
		}
		ft, ok := fields[parts[len(parts)-1]]
		if !ok {
			continue
		}
		line := lineOf(&p, e)
		key := c.index.keyAt(line, parts)
		want := `a duration string such as "30s"`
		switch ft {
		case reflect.TypeFor[Schedule]():
			want = `a quoted duration ("1m") or cron expression ("*/5 * * * *")`
		case reflect.TypeFor[URL]():
			want = `a URL string`
		}
		raw := strings.TrimSpace(string(v.Data))
		if raw == "" || len(raw) > 20 {
			raw = "the value"
		}
		return &Error{File: c.file, Line: line, Key: key, Msg: fmt.Sprintf("%s is not a string: want %s", raw, want)}
	}
	return nil
}

// textFields maps the TOML names of the fields checked as text to their
// types, in t and the structs it holds.
func textFields(t reflect.Type, out map[string]reflect.Type) {
	text := []reflect.Type{reflect.TypeFor[Duration](), reflect.TypeFor[Schedule](), reflect.TypeFor[URL]()}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		ft := f.Type
		for ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map || ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case name == "" || name == "-":
		case slices.Contains(text, ft):
			out[name] = ft
		case ft.Kind() == reflect.Struct:
			textFields(ft, out)
		}
	}
}
