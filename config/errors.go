package config

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error about the content of a config.
var ErrInvalid = errors.New("config: invalid")

// Error is one problem in a config, located by file, line and key, or, in
// a config given by command-line flags (FromFlags), by the flag.
type Error struct {
	File string // "" for a config given by flags
	Line int    // 0 when unknown
	Key  string // dotted key path, e.g. target[1].every; empty for the file
	// Flag is the command-line flag that gave Key's value ("-max-chunks",
	// "-header X-Tenant") in a config given by flags; "" in a file, or
	// when Msg names the flag itself.
	Flag string
	// Value is the value at fault when the message is about it alone
	// ("0" of "max_reconnects: 0: want 1 to 100"); "" when Msg says it.
	Value string
	Msg   string
	Err   error // the cause, if any
}

// Error is "file:line: key: value: message" for a file, "-flag value:
// message" for a flag.
func (e *Error) Error() string {
	msg := e.Msg
	if e.File == "" {
		switch {
		case e.Flag == "":
			return msg
		case e.Value != "":
			return fmt.Sprintf("%s %s: %s", e.Flag, e.Value, msg)
		}
		return fmt.Sprintf("%s: %s", e.Flag, msg)
	}
	if e.Value != "" {
		msg = e.Value + ": " + msg
	}
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Key, msg)
	}
	return fmt.Sprintf("%s: %s", loc, msg)
}

// Unwrap makes errors.Is(err, ErrInvalid) true and keeps the cause.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}
