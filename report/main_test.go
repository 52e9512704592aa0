package report

import (
	"os"
	"testing"

	"github.com/streamprobe/streamprobe/internal/testenv/tools"
)

// TestMain prints, after the tests, one line of those skipped for a
// third-party tool that is not installed, and how to install it.
func TestMain(m *testing.M) { os.Exit(tools.M{M: m}.Run()) }
