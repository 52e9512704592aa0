package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keyIndex maps dotted key paths (target[1].every) to the line that set
// them, so that validation after decoding can still say where.
type keyIndex map[string]int

func (ix keyIndex) line(key string) int {
	for k := key; k != ""; {
		if l, ok := ix[k]; ok {
			return l
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

// keyAt returns the indexed path set on line whose last part is the last
// part of key (so array tables get their number), else key dotted.
func (ix keyIndex) keyAt(line int, key []string) string {
	dotted := strings.Join(key, ".")
	if line > 0 && len(key) > 0 {
		last := key[len(key)-1]
		for k, l := range ix {
			if l == line && (k == last || strings.HasSuffix(k, "."+last)) {
				return k
			}
		}
	}
	return dotted
}

func keyParts(n *unstable.Node) []string {
	var parts []string
	it := n.Key()
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// syntaxError is the parser's message for a file that is not TOML, and
// its line.
type syntaxError struct {
	line int
	msg  string
}

// indexKeys walks the file's expressions. On a syntax error the index is
// just shorter, and the error is returned from the parser's own type
// (*unstable.ParserError): its message and where it points.
func indexKeys(b []byte) (keyIndex, *syntaxError) {
	ix := keyIndex{}
	var p unstable.Parser
	p.Reset(b)
	prefix := ""
	arrays := map[string]int{} // indexed path of an array table -> count
	resolve := func(parts []string) string {
		path := ""
		for _, part := range parts {
			if path != "" {
				path += "."
			}
			path += part
			if n, ok := arrays[path]; ok {
				path += fmt.Sprintf("[%d]", n-1)
			}
		}
		return path
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts := keyParts(e)
			if len(parts) == 0 {
				continue
			}
			if e.Kind == unstable.ArrayTable {
				parent := resolve(parts[:len(parts)-1])
				name := parts[len(parts)-1]
				if parent != "" {
					name = parent + "." + name
				}
				arrays[name]++
			}
			prefix = resolve(parts)
			ix[prefix] = lineOf(&p, e)
		case unstable.KeyValue:
			path := strings.Join(keyParts(e), ".")
			if prefix != "" {
				path = prefix + "." + path
			}
			ix[path] = lineOf(&p, e)
		}
	}
	var pe *unstable.ParserError
	if !errors.As(p.Error(), &pe) {
		return ix, nil
	}
	se := &syntaxError{msg: pe.Message}
	if len(pe.Highlight) > 0 {
		se.line = p.Shape(p.Range(pe.Highlight)).Start.Line
	}
	return ix, se
}

func lineOf(p *unstable.Parser, e *unstable.Node) int {
	it := e.Key()
	if it.Next() {
		if r := it.Node().Raw; r.Length > 0 {
			return p.Shape(r).Start.Line
		}
	}
	if v := e.Value(); v != nil && v.Raw.Length > 0 {
		return p.Shape(v.Raw).Start.Line
	}
	return 0
}
