package dialect

// Content is the visible text of a Text chunk as its event carries it: a
// JSON string's raw bytes, which share the event's memory (valid as long
// as the event is). Think reads it in place, escapes and all, without a
// copy.
type Content struct {
	raw []byte
	fl  strFlags
}

// content is the Content of a decoded string.
func content(s jstr) Content { return Content(s) }

// plainContent is the Content of text that is its own value (a read of a
// plain-text stream, a string encoding/json decoded): no escape to undo.
func plainContent(b []byte) Content { return Content{raw: b} }

// String is the text's value (for tests and messages: it may allocate).
func (c Content) String() string { return string(jstr(c).value()) }

// Think finds a reasoning block that a model streams inside its visible
// text: DeepSeek-R1 and QwQ served without a reasoning parser (Ollama's
// /api/generate, many OpenAI-compatible servers) send their reasoning as
// "<think>...</think>" ahead of the answer. The block counts only when the
// first event of visible text that holds more than white space begins with
// <think> (after white space): the text up to </think> (the tags included)
// is reasoning, the white space after it belongs to no chunk, and the
// answer starts at the first event with anything else. </think> may come
// split over events. The zero value detects; Off turns detection off. It is
// two bytes of state a run keeps, and Scan allocates nothing.
type Think struct{ state, n uint8 }

// The states of Think.
const (
	thinkUndecided uint8 = iota // no visible text yet
	thinkIn                     // in the block: n bytes of </think> matched so far
	thinkAfter                  // after the block, before the answer
	thinkAnswer                 // after the block, the answer started: text is text
	thinkNone                   // no block (or detection off): text is text
)

const (
	openTag  = "<think>"
	closeTag = "</think>"
)

// Off turns the detection off: every text is the answer's.
func (th *Think) Off() { th.state = thinkNone }

// Detected reports whether a block was found.
func (th *Think) Detected() bool { return th.state >= thinkIn && th.state <= thinkAnswer }

// Scan takes the visible text of one Text chunk and says what the event
// carried: reasoning (text of the block, its tags included) and answer
// text. An event may carry both (the block's end and the answer's start),
// or neither (white space after the block).
func (th *Think) Scan(c Content) (reasoning, text bool) {
	r := textReader{raw: c.raw, esc: c.fl&strEscaped != 0}
	switch th.state {
	case thinkNone, thinkAnswer:
		return false, true
	case thinkUndecided:
		if !r.skipSpace() {
			return false, true // white space only: text, nothing decided
		}
		if !r.prefix(openTag) {
			th.state = thinkNone
			return false, true
		}
		th.state, th.n = thinkIn, 0
		reasoning = true
	case thinkIn:
		reasoning = true
	}
	if th.state == thinkIn && !th.close(&r) {
		return reasoning, false
	}
	if r.skipSpace() {
		th.state = thinkAnswer
		return reasoning, true
	}
	return reasoning, false
}

// close reads the block's text up to </think>, carrying a partial match
// over events; true when the tag closed, the reader then just after it.
func (th *Think) close(r *textReader) bool {
	for {
		b, ok := r.next()
		if !ok {
			return false
		}
		switch {
		case b == closeTag[th.n]:
			th.n++
		case b == closeTag[0]:
			th.n = 1
		default:
			th.n = 0
		}
		if int(th.n) == len(closeTag) {
			th.state, th.n = thinkAfter, 0
			return true
		}
	}
}

// textReader reads the value of a raw JSON string byte by byte, decoding
// its escapes in place: an escaped rune beyond ASCII reads as one byte
// 0x80, which is neither white space nor part of a tag.
type textReader struct {
	raw []byte
	i   int
	esc bool
}

// next returns the next byte of the value; false at the end.
func (r *textReader) next() (byte, bool) {
	if r.i >= len(r.raw) {
		return 0, false
	}
	b := r.raw[r.i]
	r.i++
	if b != '\\' || !r.esc || r.i >= len(r.raw) {
		return b, true
	}
	e := r.raw[r.i]
	r.i++
	switch e {
	case 'n':
		return '\n', true
	case 't':
		return '\t', true
	case 'r':
		return '\r', true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'u':
		v := getu4(r.raw[r.i-2:])
		r.i += 4
		if v >= 0 && v < 0x80 {
			return byte(v), true
		}
		return 0x80, true
	}
	return e, true // " \ /
}

// skipSpace moves past white space; false when the value has nothing else.
func (r *textReader) skipSpace() bool {
	for {
		at := r.i
		b, ok := r.next()
		if !ok {
			return false
		}
		if b != ' ' && b != '\n' && b != '\r' && b != '\t' {
			r.i = at
			return true
		}
	}
}

// prefix reads tag if the value goes on with it.
func (r *textReader) prefix(tag string) bool {
	for k := 0; k < len(tag); k++ {
		b, ok := r.next()
		if !ok || b != tag[k] {
			return false
		}
	}
	return true
}
