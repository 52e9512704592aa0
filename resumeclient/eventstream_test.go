package resumeclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// esMessage is one AWS event stream message, encoded by the SDK's own
// encoder.
func esMessage(t testing.TB, msgType, typ, payload string) []byte {
	t.Helper()
	var hs eventstream.Headers
	hs.Set(":message-type", eventstream.StringValue(msgType))
	switch msgType {
	case "exception":
		hs.Set(":exception-type", eventstream.StringValue(typ))
	case "error":
		hs.Set(":error-code", eventstream.StringValue(typ))
		hs.Set(":error-message", eventstream.StringValue(payload))
		payload = ""
	default:
		hs.Set(":event-type", eventstream.StringValue(typ))
	}
	hs.Set(":content-type", eventstream.StringValue("application/json"))
	var b bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&b, eventstream.Message{Headers: hs, Payload: []byte(payload)}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// esSplit feeds in to an EventStreamParser in pieces of size step, as a
// Stream does, and returns each event as "messagetype/type/data".
func esSplit(in []byte, step, limit int) ([]string, bool, error) {
	p := &EventStreamParser{MaxEventSize: limit}
	var out []string
	err := feedSplit(p, in, step, func(ev *Event, at time.Time) error {
		if ev.FirstByte.After(ev.Dispatched) || !ev.Dispatched.Equal(at) {
			return errStampOrder
		}
		out = append(out, fmt.Sprintf("%s/%s/%s", ev.MessageType, ev.Type, ev.Data))
		return nil
	})
	return out, p.Pending(), err
}

// refEventStream is what the SDK's decoder makes of a whole body read at
// once: the reference the parser is held to.
func refEventStream(in []byte) ([]string, error) {
	r := bytes.NewReader(in)
	var out []string
	for r.Len() > 0 {
		m, err := eventstream.NewDecoder().Decode(r, nil)
		if err != nil {
			return out, err
		}
		get := func(n string) string {
			if v := m.Headers.Get(n); v != nil {
				if s, ok := v.(eventstream.StringValue); ok {
					return string(s)
				}
			}
			return ""
		}
		mt := get(":message-type")
		typ, data := get(":event-type"), string(m.Payload)
		switch mt {
		case "exception":
			typ = get(":exception-type")
		case "error":
			typ, data = get(":error-code"), get(":error-message")
		}
		out = append(out, mt+"/"+typ+"/"+data)
	}
	return out, nil
}

func TestEventStreamParser(t *testing.T) {
	t.Parallel()
	var in []byte
	in = append(in, esMessage(t, "event", "messageStart", `{"role":"assistant"}`)...)
	in = append(in, esMessage(t, "event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi"}}`)...)
	in = append(in, esMessage(t, "exception", "throttlingException", `{"message":"Too many requests"}`)...)
	in = append(in, esMessage(t, "error", "InternalFailure", "boom")...)
	want, err := refEventStream(in)
	if err != nil || len(want) != 4 {
		t.Fatalf("reference: %q %v", want, err)
	}
	for _, step := range []int{1, 3, 12, 13, 50, len(in)} {
		got, pending, err := esSplit(in, step, 0)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") || pending {
			t.Errorf("step %d: %q pending %v (%v), want %q", step, got, pending, err, want)
		}
	}
	if want[2] != `exception/throttlingException/{"message":"Too many requests"}` || want[3] != "error/InternalFailure/boom" {
		t.Errorf("reference %q", want)
	}
	// Cut off inside the second message: pending, the first one out.
	got, pending, err := esSplit(in[:len(esMessage(t, "event", "messageStart", `{"role":"assistant"}`))+20], 7, 0)
	if err != nil || len(got) != 1 || !pending {
		t.Errorf("cut: %q pending %v (%v)", got, pending, err)
	}
	// A flipped payload byte: the message CRC does not match.
	bad := bytes.Clone(in)
	bad[len(bad)-10] ^= 1
	if _, _, err := esSplit(bad, 5, 0); !errors.Is(err, ErrBadFrame) {
		t.Errorf("a corrupt message: %v", err)
	}
	// A length under the prelude's, and one over the limit.
	if _, _, err := esSplit([]byte{0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0}, 2, 0); !errors.Is(err, ErrBadFrame) {
		t.Errorf("a 3-byte message: %v", err)
	}
	if _, _, err := esSplit(in, 9, 40); !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
}

// A message that lies whole in one read is decoded in place: no copy of
// its bytes (the payload goes to the reused buffer).
func TestEventStreamParserStream(t *testing.T) {
	t.Parallel()
	one := esMessage(t, "event", "contentBlockDelta", `{"delta":{"text":"a"}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "application/vnd.amazon.eventstream" {
			http.Error(w, "accept", 400)
			return
		}
		if r.URL.Path != "/sse" {
			w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		}
		w.Write(one)
		w.(http.Flusher).Flush()
		w.Write(one[:10])
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond)
		w.Write(one[10:])
		w.Write(one[:5])
	}))
	defer srv.Close()
	c := &Client{}
	st, err := c.Open(context.Background(), Request{URL: srv.URL, Framing: FramingEventStream})
	if err != nil {
		t.Fatal(err)
	}
	var got []*Event
	for {
		ev, err := st.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		e := *ev
		got = append(got, &e)
	}
	if len(got) != 2 || !st.Truncated() || got[1].Dispatched.Sub(got[1].FirstByte) < 20*time.Millisecond {
		t.Errorf("%d events, truncated %v", len(got), st.Truncated())
	}
	if _, err = c.Open(context.Background(), Request{URL: srv.URL + "/sse", Framing: FramingEventStream}); !errors.Is(err, ErrNotEventStream) ||
		!strings.Contains(err.Error(), "application/vnd.amazon.eventstream") {
		t.Errorf("not an AWS event stream: %v", err)
	}
}

// FuzzEventStreamParser: never a panic, and the events the SDK's decoder
// reads from the whole body, however it is split; a body that does not
// decode is an error (ErrBadFrame, or ErrEventTooLarge past the limit).
func FuzzEventStreamParser(f *testing.F) {
	m := esMessage(f, "event", "contentBlockDelta", `{"delta":{"text":"a"}}`)
	e := esMessage(f, "exception", "modelStreamErrorException", `{"message":"x"}`)
	for _, s := range [][]byte{m, append(bytes.Clone(m), e...), m[:20], {0, 0, 0, 16}, append(bytes.Clone(m), 0, 0)} {
		f.Add(s, uint8(1))
		f.Add(s, uint8(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		got, pending, err := esSplit(in, int(step)+1, 1<<16)
		want, werr := refEventStream(in)
		if err != nil {
			if !errors.Is(err, ErrBadFrame) && !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("error %v", err)
			}
			if len(got) > len(want) || strings.Join(got, "\x00") != strings.Join(want[:len(got)], "\x00") {
				t.Fatalf("before the error: %q, want %q", got, want)
			}
			return
		}
		if pending {
			// A body that ends inside a message: what came before it.
			if len(got) > len(want) || strings.Join(got, "\x00") != strings.Join(want[:len(got)], "\x00") {
				t.Fatalf("pending: %q, want %q", got, want)
			}
			return
		}
		if werr != nil || strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
			t.Fatalf("step %d: %q, want %q (%v)", step+1, got, want, werr)
		}
	})
}

// BenchmarkEventStreamParserPerRead is the live Bedrock case: each
// message (a ConverseStream contentBlockDelta) in its own read. Compare
// BenchmarkParserPerRead (SSE) and BenchmarkLineParserPerRead (NDJSON).
func BenchmarkEventStreamParserPerRead(b *testing.B) {
	msg := esMessage(b, "event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":" word"},"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"}`)
	var p EventStreamParser
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		p.Push(msg, time.Now())
		for {
			ev, err := p.Next()
			if err != nil {
				b.Fatal(err)
			}
			if ev == nil {
				break
			}
			n++
		}
	}
	if n == 0 {
		b.Fatal("no message")
	}
}
