package config

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// A results log whose directory is missing: fine when this user can make
// it (run does, 0750, with MakeLogDir), else one line naming the
// directory to create and the command that creates it.
func TestWritableLogAndMakeLogDir(t *testing.T) {
	base := t.TempDir()
	log := filepath.Join(base, "var", "lib", "streamprobe", "results.jsonl")
	if err := WritableLog(log); err != nil {
		t.Fatalf("a directory this user can make: %v", err)
	}
	if err := MakeLogDir(log); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Dir(log))
	if err != nil || !fi.IsDir() {
		t.Fatalf("MakeLogDir made no directory: %v", err)
	}
	if mode := fi.Mode().Perm(); mode&^LogDirMode != 0 || mode&0o700 != 0o700 {
		t.Errorf("directory mode %o, want %o (less the umask)", mode, LogDirMode)
	}
	if err := WritableLog(log); err != nil {
		t.Errorf("once made: %v", err)
	}

	// Under a file no user can make a directory, root included.
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	bad := filepath.Join(file, "streamprobe", "results.jsonl")
	if err := WritableLog(bad); err == nil || err.Error() != "cannot use "+bad+": not a directory" {
		t.Errorf("under a file: %v", err)
	}
	if err := MakeLogDir(bad); err == nil {
		t.Error("MakeLogDir made a directory under a file")
	}
	if os.Getuid() == 0 {
		return // root may write in any directory: no read-only one to test
	}
	who := strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	ro := filepath.Join(base, "ro")
	os.Mkdir(ro, 0o500)
	dir := filepath.Join(ro, "a", "b")
	want := "directory " + dir + " does not exist and user " + who + " cannot create it in " + ro + ": create it with install -d -m 0750 -o " + who + " " + dir
	if err := WritableLog(filepath.Join(dir, "results.jsonl")); err == nil || err.Error() != want {
		t.Errorf("under a read-only directory:\n got %v\nwant %s", err, want)
	}
}
