package resumeclient

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
)

// BenchmarkTransportRoundTrip is one request through the Transport to a
// loopback server that answers at once with a short event stream: the
// dial, the request write, the header read and the body to its end.
func BenchmarkTransportRoundTrip(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	b.Cleanup(func() { ln.Close(); wg.Wait() })
	const answer = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 18\r\n\r\nid: 1\ndata: one\n\n\n"
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
					io.WriteString(c, answer)
				}
			}()
		}
	}()
	tr := &Transport{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }}
	req, err := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/stream", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != 18 {
			b.Fatalf("body: %d bytes, %v", n, err)
		}
		resp.Body.Close()
	}
}
