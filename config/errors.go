package config

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error about the content of a config file.
var ErrInvalid = errors.New("config: invalid")

// Error is one problem in a config file, located by file, line and key.
type Error struct {
	File string
	Line int    // 0 when unknown
	Key  string // dotted key path, e.g. target[1].every; empty for the file
	Msg  string
	Err  error // the cause, if any
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalid) true and keeps the cause.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}
