package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestExampleValidates(t *testing.T) {
	c, err := Load("../probe.example.toml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Targets) != 2 || c.Targets[0].Name != "reference-chat" || !c.Targets[0].Builtin {
		t.Fatalf("targets %+v", c.Targets)
	}
	if c.Targets[1].Every.Every != time.Minute || c.Targets[1].Jitter.Duration != 5*time.Second {
		t.Errorf("defaults: every %v jitter %v", c.Targets[1].Every, c.Targets[1].Jitter)
	}
	if c.Budgets["short"].TFC.Duration != 600*time.Millisecond {
		t.Errorf("budget %+v", c.Budgets)
	}
	if c.Push.Histograms != "vmrange" || c.Push.Interval.Duration != 15*time.Second || c.Listen != "127.0.0.1:9464" {
		t.Errorf("push %+v listen %q", c.Push, c.Listen)
	}
}

// Each testdata/bad-*.toml must fail with exactly the message on its first
// line, after "# want: ".
func TestBadConfigs(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad-*.toml")
	if len(files) < 6 {
		t.Fatalf("only %d bad configs", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(b), "\n")
			want, ok := strings.CutPrefix(first, "# want: ")
			if !ok {
				t.Fatalf("%s: first line must be '# want: <message>'", f)
			}
			_, err = Load(f, env(map[string]string{"SET_KEY": "x"}))
			if err == nil {
				t.Fatalf("loaded without error, want %q", want)
			}
			if err.Error() != want {
				t.Errorf("error\n  %s\nwant\n  %s", err, want)
			}
			if !errors.Is(err, ErrInvalid) && !strings.Contains(err.Error(), "no such file") {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
		})
	}
}

func TestSecretFromFile(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	os.WriteFile(key, []byte("sk-from-file\n"), 0o600)
	v, err := Secret("", key, env(nil))
	if err != nil || v != "sk-from-file" {
		t.Errorf("Secret = %q, %v", v, err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	if _, err := Secret("", empty, env(nil)); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty file: %v", err)
	}
}

func TestCronSchedule(t *testing.T) {
	c, err := Parse("x.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\nevery = \"*/5 * * * *\"\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Targets[0].Every.Cron != "*/5 * * * *" {
		t.Errorf("every %+v", c.Targets[0].Every)
	}
}
