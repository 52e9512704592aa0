package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// FromFlags checks c, a config given by command-line flags (streamprobe
// once) rather than read from a file, with the validation a file gets. No
// target default is set: each value is its flag's. flags maps each key
// the command sets, as a file writes it ("target[0].max_chunks", "labels"
// for every key of [labels]), to its flag ("-max-chunks", "-label"); each
// counts as written. An error names the flag, "-max-chunks 0: want 1 to
// 10000000", instead of file:line:key. A target's name is free text here:
// it becomes no label value.
func FromFlags(c Config, flags map[string]string, env Env) (*Config, error) {
	c.file, c.flags, c.index = "", flags, keyIndex{}
	for k := range flags {
		c.index[k] = 0
	}
	c.setHostDefaults()
	if err := c.validate(env); err != nil {
		return nil, err
	}
	return &c, nil
}

// flagOf is the flag that gave key's value ("-header X-Tenant" for
// target[0].headers.X-Tenant), or "" (always, in a file).
func (c *Config) flagOf(key string) string {
	if f, ok := c.flags[key]; ok {
		return f
	}
	if i := strings.LastIndexByte(key, '.'); i > 0 {
		if f, ok := c.flags[key[:i]]; ok {
			return f + " " + key[i+1:]
		}
	}
	return ""
}

// name is how a message names the key at path: the key itself in a file
// ("max_stream"), its flag on the command line ("-timeout"); "" for a key
// no flag sets.
func (c *Config) name(path string) string {
	if c.flags != nil {
		return c.flagOf(path)
	}
	return path[strings.LastIndexByte(path, '.')+1:]
}

// setting names a boolean key set to true: "builtin = true", "-builtin".
func (c *Config) setting(path string) string {
	if c.flags != nil {
		return c.flagOf(path)
	}
	return c.name(path) + " = true"
}

// oneOf names the keys at paths as alternatives ("bearer_env, bearer_file
// or header_env"), leaving out those the origin cannot set.
func (c *Config) oneOf(paths ...string) string {
	var names []string
	for _, p := range paths {
		if n := c.name(p); n != "" {
			names = append(names, n)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// inline is where a secret may not be written.
func (c *Config) inline() string {
	if c.flags != nil {
		return "given on the command line"
	}
	return "inline"
}

// elem prefixes a message about the j-th entry of the list at path:
// "samples[1]: " in a file; nothing for a flag, which names one entry.
func (c *Config) elem(path string, j int) string {
	if c.flags != nil {
		return ""
	}
	return fmt.Sprintf("%s[%d]: ", c.name(path), j)
}

// errAt returns an error located at key: "file:line: key: message",
// "-flag: message".
func (c *Config) errAt(key, format string, args ...any) error {
	return &Error{File: c.file, Line: c.index.line(key), Key: key, Flag: c.flagOf(key), Msg: fmt.Sprintf(format, args...)}
}

// ErrorAt is err located at key: "file:line: key: err" in a file,
// "-flag: err" for a config given by flags. Checks made outside the
// package (a dialect that cannot build a target's request) name the
// setting at fault with it.
func (c *Config) ErrorAt(key string, err error) error {
	return &Error{File: c.file, Line: c.index.line(key), Key: key, Flag: c.flagOf(key), Msg: err.Error(), Err: err}
}

// errValue returns an error about the value of key alone: "file:line:
// key: value: message", "-flag value: message".
func (c *Config) errValue(key, value, format string, args ...any) error {
	return &Error{File: c.file, Line: c.index.line(key), Key: key, Flag: c.flagOf(key), Value: value, Msg: fmt.Sprintf(format, args...)}
}

// errNamed returns an error located at key whose message names every key
// it is about (c.name): "file:line: key: message", or the message alone.
func (c *Config) errNamed(key, format string, args ...any) error {
	return &Error{File: c.file, Line: c.index.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
}

// fromFile reports whether c was read from a file, not given by flags.
func (c *Config) fromFile() bool { return c.flags == nil }

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
