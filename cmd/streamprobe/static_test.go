package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The release build (docs/deploying.md "By hand"): CGO_ENABLED=0 gives one
// static binary, with no ELF interpreter, no dynamic section and no shared
// library needed, so it runs on any Linux host of its architecture.
func TestReleaseBuildIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "streamprobe")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the release binary has a %s program header: it is dynamically linked", p.Type)
		}
	}
	if s := f.Section(".dynamic"); s != nil {
		t.Error("the release binary has a .dynamic section")
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the release binary needs shared libraries %v (%v)", libs, err)
	}
	// It runs: -h exits 0.
	if out, err := exec.Command(bin, "once", "-h").CombinedOutput(); err != nil {
		t.Errorf("the release binary does not run: %v\n%s", err, out)
	}
}
