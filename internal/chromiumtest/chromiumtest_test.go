package chromiumtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The browser runs a page's script before the DOM is dumped, and takes a
// screenshot of it.
func TestDumpDOMAndScreenshot(t *testing.T) {
	Bin(t)
	page := filepath.Join(t.TempDir(), "page.html")
	html := `<!doctype html><html><body style="background:#369"><p id="p">static</p>
<script>document.getElementById("p").textContent = "scripted " + (6 * 7);</script></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	if dom := DumpDOM(t, "file://"+page); !strings.Contains(dom, `<p id="p">scripted 42</p>`) {
		t.Errorf("the script did not run:\n%s", dom)
	}
	Screenshot(t, "file://"+page, 400, 300, 100)
}
