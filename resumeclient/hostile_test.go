package resumeclient

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/streamprobe/streamprobe/internal/testenv/leak"
)

const hostileKey = "sk-hostile-0123456789abcdefghijklmnopqr"

// hostileHeader is a request header carrying the key, as a probe sends it.
func hostileHeader() http.Header { return http.Header{"Authorization": {"Bearer " + hostileKey}} }

// answer is a raw server that reads one request and writes resp.
func answer(t *testing.T, resp string) string {
	return rawServer(t, func(c net.Conn) {
		http.ReadRequest(bufio.NewReader(c))
		io.WriteString(c, resp)
	})
}

// mustBeGated fails when err's message quotes the key in any form, runs
// over MaxErrorText or spans lines.
func mustBeGated(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	msg := err.Error()
	if p := leak.Any(msg, hostileKey); p != "" {
		t.Errorf("%s: the error shows %q: %s", what, p, msg)
	}
	if len(msg) > MaxErrorText {
		t.Errorf("%s: the error is %d bytes, over %d", what, len(msg), MaxErrorText)
	}
	if strings.ContainsAny(msg, "\r\n\x1b") {
		t.Errorf("%s: the error holds a control character: %q", what, msg)
	}
}

// A malformed header line of 1 MB, one that carries the key (as it is,
// percent-encoded or in base64), and a bad trailer that carries it, give
// one bounded line without the key.
func TestMalformedHeaderLinesAreGated(t *testing.T) {
	key64 := base64.StdEncoding.EncodeToString([]byte(hostileKey))
	for name, resp := range map[string]string{
		"1 MB bad line":     "HTTP/1.1 200 OK\r\n" + strings.Repeat("x", 1<<20-100) + "\r\n\r\n",
		"line with the key": "HTTP/1.1 200 OK\r\nBearer " + hostileKey + "\r\n\r\n",
		"percent-encoded":   "HTTP/1.1 200 OK\r\nbad " + url.QueryEscape(hostileKey) + "\r\n\r\n",
		"base64":            "HTTP/1.1 200 OK\r\nbad " + key64 + "\r\n\r\n",
		"bad status line":   "HTTP/1.1 2x0 " + hostileKey + "\r\n\r\n",
	} {
		addr := answer(t, resp)
		_, err := (&Client{}).Open(context.Background(), Request{URL: "http://" + addr + "/", Header: hostileHeader()})
		mustBeGated(t, name, err)
		if !errors.Is(err, ErrConnect) {
			t.Errorf("%s: %v does not wrap ErrConnect", name, err)
		}
	}
	addr := answer(t, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
		"8\r\ndata: x\n\r\n0\r\nBad trailer "+hostileKey+strings.Repeat("y", 100<<10)+"\r\n\r\n")
	st, err := (&Client{}).Open(context.Background(), Request{URL: "http://" + addr + "/", Header: hostileHeader()})
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = st.Next()
	}
	mustBeGated(t, "bad trailer", err)
	if !errors.Is(err, ErrReset) {
		t.Errorf("bad trailer: %v does not wrap ErrReset", err)
	}
}

// A header that runs over the limit is named as the size limit, whatever
// line the cut lands in (it used to read "missing colon: X-96329").
func TestHeaderOverTheLimitIsNamed(t *testing.T) {
	const limit = 64 << 10
	for _, over := range []int{1, 3, 7, 20} {
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\n")
		for i := 0; b.Len() < limit+over; i++ {
			fmt.Fprintf(&b, "X-%d: a\r\n", i)
		}
		b.WriteString("\r\n")
		addr := answer(t, b.String())
		c := &Client{HTTP: &http.Client{Transport: &Transport{MaxResponseHeaderBytes: limit}}}
		_, err := c.Open(context.Background(), Request{URL: "http://" + addr + "/"})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("header exceeded %d bytes", limit)) {
			t.Errorf("%d bytes over: %v, want the size limit named", over, err)
		}
	}
}

// The content type of an answer that is not an event stream is quoted
// scrubbed and bounded: a 200 KB Content-Type that carries the key gave a
// 500 KB record.
func TestContentTypeIsGated(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; x="+strings.Repeat("a", 200<<10)+hostileKey)
		io.WriteString(w, "<html>"+hostileKey)
	}))
	defer ts.Close()
	_, err := (&Client{}).Open(context.Background(), Request{URL: ts.URL, Header: hostileHeader()})
	mustBeGated(t, "content type", err)
	if !errors.Is(err, ErrNotEventStream) {
		t.Errorf("%v does not wrap ErrNotEventStream", err)
	}
	ts2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; key="+strings.ReplaceAll(hostileKey, "-", "%2d"))
	}))
	defer ts2.Close()
	_, err = (&Client{}).Open(context.Background(), Request{URL: ts2.URL, Header: hostileHeader()})
	mustBeGated(t, "encoded key in the content type", err)
}

// A proxy that echoes its credentials (407 body, reason phrase) shows
// none of them: the proxy's credentials are secrets too.
func TestProxyCredentialsAreSecrets(t *testing.T) {
	const pass = "proxy-secret-pass-42"
	proxy := rawServer(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		auth := req.Header.Get("Proxy-Authorization")
		dec, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(auth, "Basic "))
		body := "denied: " + auth + " " + string(dec)
		fmt.Fprintf(c, "HTTP/1.1 407 Denied %s\r\nContent-Length: %d\r\n\r\n%s", dec, len(body), body)
	})
	pu, _ := url.Parse("http://probe:" + pass + "@" + proxy)
	c := &Client{HTTP: &http.Client{Transport: &Transport{Proxy: http.ProxyURL(pu)}}}
	for _, target := range []string{"http://example.invalid/events", "https://example.invalid/events"} {
		_, err := c.Open(context.Background(), Request{URL: target})
		if err == nil {
			t.Fatalf("%s: no error", target)
		}
		if !strings.Contains(err.Error(), "407") && !strings.Contains(err.Error(), "Denied") {
			t.Errorf("%s: %v: the proxy's answer is not in the error", target, err)
		}
		if strings.Contains(err.Error(), pass) || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte("probe:"+pass))) {
			t.Errorf("%s: the error shows the proxy's credentials: %v", target, err)
		}
	}
}

// An id with a byte no header may carry (SSE allows it) cannot be sent
// back: the request is refused before any attempt, and a Session stops at
// once instead of retrying requests that cannot succeed.
func TestUnsendableLastEventID(t *testing.T) {
	var requests atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: a\x01b\ndata: one\n\n")
	}))
	defer ts.Close()
	s, err := (&Client{}).NewSession(context.Background(), Request{URL: ts.URL}, SessionOptions{Retry: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got error
	for got == nil {
		_, got = s.Next()
	}
	if !errors.Is(got, ErrInvalidRequest) || !strings.Contains(got.Error(), "0x01") {
		t.Errorf("Session ended with %v, want ErrInvalidRequest naming the byte", got)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1: the resume cannot be sent", n)
	}
	if i := InvalidHeaderByte("a\tb"); i != -1 {
		t.Errorf("a tab is allowed in a header value, got offset %d", i)
	}
}

// A short bad trailer line (not only a 1 MB one) is gated too: the key,
// as it is or percent-encoded, and terminal controls (ESC, OSC, BEL, CR)
// in it never reach the error, which stays one bounded line.
func TestShortBadTrailerIsGated(t *testing.T) {
	for name, line := range map[string]string{
		"key":         "Bad trailer " + hostileKey,
		"percent key": "bad " + url.QueryEscape(hostileKey),
		"controls":    "bad \x1b]0;pwned\x07 \x1b[2J\rX-Forged: 1",
	} {
		addr := answer(t, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
			"8\r\ndata: x\n\r\n0\r\n"+line+"\r\n\r\n")
		st, err := (&Client{}).Open(context.Background(), Request{URL: "http://" + addr + "/", Header: hostileHeader()})
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, err = st.Next()
		}
		mustBeGated(t, name, err)
		if msg := err.Error(); strings.ContainsAny(msg, "\x07\x1b\r\u009b") {
			t.Errorf("%s: the error holds a terminal control: %q", name, msg)
		}
		if !errors.Is(err, ErrReset) {
			t.Errorf("%s: %v does not wrap ErrReset", name, err)
		}
		st.Close()
	}
}
