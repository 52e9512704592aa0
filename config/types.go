package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Duration is a time.Duration written as a Go duration string ("90s",
// "1m30s"), checked when the file is loaded.
type Duration struct{ time.Duration }

// UnmarshalText parses a duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (want e.g. \"30s\", \"1m\")", b)
	}
	if v < 0 {
		return fmt.Errorf("%q is negative", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration back as a string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// URL is an absolute http or https URL, checked when the file is loaded.
type URL struct{ *url.URL }

// UnmarshalText parses and checks a URL. Its error does not quote the
// text, whose user info or query may hold a secret.
func (u *URL) UnmarshalText(b []byte) error {
	v, err := url.Parse(string(b))
	if err != nil || (v.Scheme != "http" && v.Scheme != "https") || v.Host == "" {
		return errors.New("want an absolute http or https URL")
	}
	u.URL = v
	return nil
}

// String returns the URL, or "" when unset.
func (u URL) String() string {
	if u.URL == nil {
		return ""
	}
	return u.URL.String()
}

// Schedule is how often a job runs: a Go duration ("1m") or a five-field
// cron expression ("*/5 * * * *").
type Schedule struct {
	Every time.Duration // > 0 for an interval
	Cron  string        // set for a cron expression
}

// UnmarshalText parses and checks a schedule.
func (s *Schedule) UnmarshalText(b []byte) error {
	str := strings.TrimSpace(string(b))
	if d, err := time.ParseDuration(str); err == nil {
		if d <= 0 {
			return fmt.Errorf("%q: the interval must be positive", str)
		}
		*s = Schedule{Every: d}
		return nil
	}
	if _, err := cron.ParseStandard(str); err != nil {
		return fmt.Errorf("%q is neither a duration (\"1m\") nor a cron expression (\"*/5 * * * *\"): %v", str, err)
	}
	*s = Schedule{Cron: str}
	return nil
}

// String returns the schedule as written.
func (s Schedule) String() string {
	if s.Cron != "" {
		return s.Cron
	}
	return s.Every.String()
}

// IsZero reports whether no schedule was set.
func (s Schedule) IsZero() bool { return s.Every == 0 && s.Cron == "" }
