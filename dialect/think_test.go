package dialect

import (
	"encoding/json"
	"strings"
	"testing"
)

// contentOf is s as a dialect hands it out: the raw bytes of its JSON
// string (Go's encoder escapes <, > and & as Ollama's does).
func contentOf(t testing.TB, s string) Content {
	t.Helper()
	b, _ := json.Marshal(s)
	sc := jscan{data: b}
	v, ok := sc.str()
	if !ok {
		t.Fatalf("%q does not read back", b)
	}
	return content(v)
}

// thinkRef classifies the events of a text by the definition, on their
// decoded values: the first event with more than white space decides; in
// a block, every event is reasoning until the one that ends </think>
// (found in the concatenation), which is text when anything but white
// space follows the tag in it; then white-space-only events are neither
// until the answer's first, after which all is text.
func thinkRef(evs []string) (reasoning, text []bool) {
	reasoning, text = make([]bool, len(evs)), make([]bool, len(evs))
	i := 0
	for ; i < len(evs) && strings.TrimLeft(evs[i], " \t\r\n") == ""; i++ {
		text[i] = true
	}
	if i == len(evs) {
		return reasoning, text
	}
	if !strings.HasPrefix(strings.TrimLeft(evs[i], " \t\r\n"), openTag) {
		for ; i < len(evs); i++ {
			text[i] = true
		}
		return reasoning, text
	}
	all := strings.Join(evs[i:], "")
	start := len(evs[i]) - len(strings.TrimLeft(evs[i], " \t\r\n")) + len(openTag)
	end := strings.Index(all[start:], closeTag)
	if end < 0 {
		for ; i < len(evs); i++ {
			reasoning[i] = true
		}
		return reasoning, text
	}
	end += start + len(closeTag) // in all
	answer := false
	for off := 0; i < len(evs); off, i = off+len(evs[i]), i+1 {
		switch {
		case off < end:
			reasoning[i] = true
			if off+len(evs[i]) > end && strings.TrimLeft(evs[i][end-off:], " \t\r\n") != "" {
				text[i], answer = true, true
			}
		case answer || strings.TrimLeft(evs[i], " \t\r\n") != "":
			text[i], answer = true, true
		}
	}
	return reasoning, text
}

func checkThink(t *testing.T, evs []string) {
	t.Helper()
	var th Think
	wr, wt := thinkRef(evs)
	for i, e := range evs {
		r, tx := th.Scan(contentOf(t, e))
		if r != wr[i] || tx != wt[i] {
			t.Fatalf("%q, event %d (%q): reasoning %v text %v, want %v %v", evs, i, e, r, tx, wr[i], wt[i])
		}
	}
}

func TestThink(t *testing.T) {
	for _, evs := range [][]string{
		{"<think>", "\nOkay", " so", "</think>", "\n\n", "Paris", "."},
		{"  \n<think>hm</think>Paris"},
		{"<think>a</th", "ink>", " ", "b"},
		{"<think>a<</", "/think>\n\nb"},
		{"<think>a", "<", "</think>", "b"},
		{"<think>", "never closed", "still"},
		{"Paris", "<think>", "</think>"},
		{"\n", "<think>", "x</think>", "y"},
		{"<thin", "k>", "y"},
		{"<think>a</think>", "  ", "\n", "b", " ", "c"},
		{"<think>é and \u2028 & <tags></think>ok"},
		{"<think></think></think>", "x"},
	} {
		checkThink(t, evs)
	}
	var th Think
	th.Off()
	if r, tx := th.Scan(contentOf(t, "<think>x")); r || !tx || th.Detected() {
		t.Errorf("off: reasoning %v text %v detected %v", r, tx, th.Detected())
	}
}

// FuzzThink: Scan agrees with the definition (thinkRef) however the text
// is cut into events, escapes and all.
func FuzzThink(f *testing.F) {
	f.Add("<think>\nOkay</think>\n\nParis.", []byte{3, 9, 2, 1})
	f.Add(" <think>a</think> b", []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Add("<think>x<</think", []byte{8})
	f.Add("no think", []byte{2})
	f.Fuzz(func(t *testing.T, text string, cuts []byte) {
		var evs []string
		for _, c := range cuts {
			if text == "" {
				break
			}
			n := min(int(c), len(text))
			if n > 0 {
				evs, text = append(evs, text[:n]), text[n:]
			}
		}
		if text != "" {
			evs = append(evs, text)
		}
		for i, e := range evs {
			var v string
			b, _ := json.Marshal(e)
			json.Unmarshal(b, &v) // the value a dialect sees: invalid UTF-8 replaced
			evs[i] = v
		}
		checkThink(t, evs)
	})
}
