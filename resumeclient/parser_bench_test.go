package resumeclient

import (
	"strconv"
	"testing"
	"time"
)

// chatEvent is a typical OpenAI-compatible chunk on the wire.
func chatEvent(i int) []byte {
	return []byte("id: " + strconv.Itoa(i) + "\ndata: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" word\"},\"finish_reason\":null}]}\n\n")
}

// BenchmarkParseEventPerRead is the live case: each event arrives in its
// own read, which is timestamped (time.Now) before the parser sees it.
func BenchmarkParseEventPerRead(b *testing.B) {
	evs := make([][]byte, 64)
	size := 0
	for i := range evs {
		evs[i] = chatEvent(i)
		size += len(evs[i])
	}
	var p Parser
	b.SetBytes(int64(size / len(evs)))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		p.Push(evs[i%len(evs)], time.Now())
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
	if n != b.N {
		b.Fatalf("parsed %d events, want %d", n, b.N)
	}
}

// BenchmarkParseBulk is the catch-up case: many events in one 32 KiB read.
func BenchmarkParseBulk(b *testing.B) {
	var buf []byte
	per := 0
	for i := 0; len(buf) < 32<<10; i++ {
		buf = append(buf, chatEvent(i)...)
		per++
	}
	var p Parser
	b.SetBytes(int64(len(buf) / per))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for n < b.N {
		p.Push(buf, time.Now())
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
}
