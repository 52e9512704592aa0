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

// DumpDOMConsole returns what a page wrote to the console, an uncaught
// exception included, and nothing for a page that wrote nothing.
func TestDumpDOMConsole(t *testing.T) {
	Bin(t)
	dir := t.TempDir()
	write := func(name, html string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		return "file://" + p
	}
	noisy := write("noisy.html", `<!doctype html><html><body><p id="p">x</p>
<script>console.error("ERR-MARK-1"); noSuchFunction();</script></body></html>`)
	quiet := write("quiet.html", `<!doctype html><html><body><p id="p">x</p>
<script>document.body.dataset.ok = "1"</script></body></html>`)
	dom, console := DumpDOMConsole(t, noisy)
	all := strings.Join(console, "\n")
	if !strings.Contains(dom, `<p id="p">x</p>`) || !strings.Contains(all, "ERR-MARK-1") || !strings.Contains(all, "noSuchFunction is not defined") {
		t.Errorf("noisy page: console %q, dom:\n%s", console, dom)
	}
	if dom, console := DumpDOMConsole(t, quiet); len(console) != 0 || !strings.Contains(dom, `data-ok="1"`) {
		t.Errorf("quiet page: console %q, dom:\n%s", console, dom)
	}
}
