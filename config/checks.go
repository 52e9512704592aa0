package config

import (
	"encoding"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
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
		if err := WritableLog(c.ResultsLog); err != nil {
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

// LogDirMode is the mode of a results log directory that run creates.
const LogDirMode = 0o750

// WritableLog is Writable for the results log, whose directory run creates
// when it is missing (MakeLogDir): a missing directory is fine when this
// user can create it; when it cannot, the error names the directory to
// create, and how.
func WritableLog(path string) error {
	if err := RegularLog(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return Writable(path)
	}
	parent := filepath.Dir(dir)
	for parent != filepath.Dir(parent) {
		if _, err := os.Stat(parent); err == nil {
			break
		}
		parent = filepath.Dir(parent)
	}
	if fi, err := os.Stat(parent); err == nil && fi.IsDir() && syscall.Access(parent, 2|1 /* W_OK|X_OK */) == nil {
		return nil // run creates it
	}
	who := strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	return fmt.Errorf("directory %s does not exist and user %s cannot create it in %s: create it with install -d -m 0750 -o %s %s", dir, who, parent, who, dir)
}

// RegularLog reports a results log path that exists and is not a regular
// file (a FIFO, a device, a socket): an open of a FIFO for writing would
// block until a reader comes, and nothing else can be appended to and
// reopened at a rotation. A symbolic link to a regular file is fine.
func RegularLog(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() || fi.IsDir() {
		return nil // missing: created; a directory: Writable says so
	}
	return fmt.Errorf("%s is %s, not a regular file: the results log must be a file the daemon can append to and reopen", path, fileKind(fi.Mode()))
}

// fileKind names a file's type, with its article.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// OpenLog opens the results log for appending, creating it (mode 0640):
// without blocking (a FIFO planted after the config was read fails at
// once, it does not wait for a reader), and only when it is a regular
// file.
func OpenLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o640)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			return nil, fmt.Errorf("%s is a FIFO, not a regular file: the results log must be a file the daemon can append to and reopen", path)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is %s, not a regular file: the results log must be a file the daemon can append to and reopen", path, fileKind(fi.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// MakeLogDir creates the results log's directory (LogDirMode) when it is
// missing.
func MakeLogDir(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, LogDirMode); err != nil {
		return fmt.Errorf("cannot create directory %s: %v", dir, unwrapPath(err))
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

// valueError finds the first value of the file that does not fit its
// field: a value of the wrong TOML type (timeout = 5, samples = "short"),
// or a text that its field's UnmarshalText refuses ("15 seconds"). The
// decoder reports these too, but only as text; this walk knows the field
// and gives the line, the key and a message for people. It returns nil
// when every value fits (unknown keys are the strict decoder's to name).
func (c *Config) valueError(b []byte) error {
	var p unstable.Parser
	p.Reset(b)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(e)
			continue
		case unstable.KeyValue:
		default:
			continue
		}
		parts := keyParts(e)
		ft, ok := fieldType(reflect.TypeFor[Config](), append(slices.Clone(table), parts...))
		v := e.Value()
		if !ok || v == nil {
			continue
		}
		msg := misfit(ft, v)
		if msg == "" {
			continue
		}
		line := lineOf(&p, e)
		return &Error{File: c.file, Line: line, Key: c.index.keyAt(line, parts), Msg: msg}
	}
	return nil
}

// fieldType is the type of the field at path (TOML names) in t.
func fieldType(t reflect.Type, path []string) (reflect.Type, bool) {
	for _, part := range path {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := tomlField(t, part)
			if !ok {
				return nil, false
			}
			t = f
		default:
			return nil, false
		}
	}
	return t, true
}

func tomlField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if n, _, _ := strings.Cut(f.Tag.Get("toml"), ","); n == name {
			return f.Type, true
		}
	}
	return nil, false
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// misfit says why v cannot be decoded into a field of type t, or "".
func misfit(t reflect.Type, v *unstable.Node) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return textMisfit(t, v)
	}
	ok := false
	switch t.Kind() {
	case reflect.String:
		ok = v.Kind == unstable.String
	case reflect.Int, reflect.Int64:
		if ok = v.Kind == unstable.Integer; ok {
			return intMisfit(v.Data)
		}
	case reflect.Float64:
		ok = v.Kind == unstable.Float || v.Kind == unstable.Integer
	case reflect.Bool:
		ok = v.Kind == unstable.Bool
	case reflect.Slice:
		if ok = v.Kind == unstable.Array; ok {
			for it := v.Children(); it.Next(); {
				if msg := misfit(t.Elem(), it.Node()); msg != "" {
					return msg
				}
			}
		}
	case reflect.Map:
		if ok = v.Kind == unstable.InlineTable; ok {
			for it := v.Children(); it.Next(); {
				if kv := it.Node(); kv.Kind == unstable.KeyValue {
					if msg := misfit(t.Elem(), kv.Value()); msg != "" {
						return msg
					}
				}
			}
		}
	default:
		return ""
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("%s where %s belongs", tomlKind(v.Kind), goKind(t))
}

// textMisfit says why v cannot be decoded into t, a type that reads a
// string with UnmarshalText (Duration, Schedule, URL), or "".
func textMisfit(t reflect.Type, v *unstable.Node) string {
	if v.Kind != unstable.String {
		raw := strings.TrimSpace(string(v.Data))
		if raw == "" || len(raw) > 20 {
			raw = "the value"
		}
		want := `a duration string such as "30s"`
		switch t {
		case reflect.TypeFor[Schedule]():
			want = `a quoted duration ("1m") or cron expression ("*/5 * * * *")`
		case reflect.TypeFor[URL]():
			want = `a URL string`
		}
		return fmt.Sprintf("%s is not a string: want %s", raw, want)
	}
	if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText(v.Data); err != nil {
		return err.Error()
	}
	return ""
}

// intMisfit says why a TOML integer does not fit an int64, or "".
func intMisfit(data []byte) string {
	_, err := strconv.ParseInt(string(data), 0, 64)
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Sprintf("%s does not fit in a 64-bit integer", data)
	}
	return ""
}

func tomlKind(k unstable.Kind) string {
	switch k {
	case unstable.String:
		return "a string"
	case unstable.Integer:
		return "an integer"
	case unstable.Float:
		return "a number"
	case unstable.Bool:
		return "true or false"
	case unstable.Array:
		return "a list"
	case unstable.InlineTable:
		return "a table"
	}
	return "a date or time"
}

func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of strings"
	case reflect.Map:
		return "a table of strings"
	}
	return "another type of value"
}
