package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// MaxMessage bounds a provider's error message kept from the stream, in
// bytes.
const MaxMessage = 200

// boundMessage makes a provider's error message safe to keep: every secret
// of the target's headers is redacted before the message is cut to
// MaxMessage bytes, and it is one line of printable text.
func boundMessage(t Target, m string) string {
	return resumeclient.Scrub(m, resumeclient.Secrets(t.Header, resumeclient.URLSecrets(t.URL)...), MaxMessage)
}

// jsonError turns an encoding/json error about an event of dialect into a
// short message that names the field, never a Go type, and never repeats
// the event.
func jsonError(dialect, what string, data []byte, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = what
		}
		got, _, _ := strings.Cut(te.Value, " ")
		return fmt.Errorf("%s: %s: want %s, got %s", dialect, resumeclient.Scrub(field, nil, 60), kindName(te.Type), resumeclient.Scrub(got, nil, 16))
	case errors.As(err, &se):
		return fmt.Errorf("%s: %s is not valid JSON (%d bytes, error at byte %d)", dialect, what, len(data), se.Offset)
	}
	return fmt.Errorf("%s: %s is not valid JSON (%d bytes)", dialect, what, len(data))
}

// kindName names what a Go type accepts in JSON terms.
func kindName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another type"
}
