package daemon

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// resultsQueueLen bounds the records waiting for the results log: a disk
// that hangs costs at most this many records in memory, then records are
// dropped (and counted), never a blocked run.
const resultsQueueLen = 1024

// resultsQueueBytes bounds the same queue in bytes: a record can be large
// (every gap of a run up to max_chunks), so the count alone does not bound
// the memory.
const resultsQueueBytes = 16 << 20

// resultsLog appends records as JSON lines from a goroutine of its own, so
// a slow or full disk never holds up a run or the scheduling. A failed
// write never leaves a partial line behind.
type resultsLog struct {
	queue    chan []byte
	done     chan struct{}
	enabled  atomic.Bool
	queued   atomic.Int64 // bytes in the queue
	maxBytes int64

	mu sync.Mutex // guards f; held for one write or a swap
	f  *os.File

	// The last write's outcome, for /healthz: when the last failed and
	// the last succeeded (zero: never), and the failure's error.
	stateMu        sync.Mutex
	failedAt, okAt time.Time
	failure        string
	droppedAt      atomic.Int64 // when a record was last dropped (Unix ns)

	onError func(error) // a write failed (the record is lost)
	onDrop  func()      // the queue was full (the record is lost)
}

func newResultsLog(queueLen int, onError func(error), onDrop func()) *resultsLog {
	l := &resultsLog{queue: make(chan []byte, queueLen), done: make(chan struct{}), onError: onError, onDrop: onDrop, maxBytes: resultsQueueBytes}
	go l.loop()
	return l
}

func (l *resultsLog) loop() {
	defer close(l.done)
	for line := range l.queue {
		l.queued.Add(-int64(len(line)))
		l.mu.Lock()
		var err error
		wrote := l.f != nil
		if wrote {
			err = writeLine(l.f, line)
		}
		l.mu.Unlock()
		if !wrote {
			continue
		}
		l.stateMu.Lock()
		if err != nil {
			l.failedAt, l.failure = time.Now(), err.Error()
		} else {
			l.okAt = time.Now()
		}
		l.stateMu.Unlock()
		if err != nil {
			l.onError(err)
		}
	}
}

// failing reports whether the last write failed, since when (the first
// failure after the last success) and why.
func (l *resultsLog) failing() (bool, time.Time, string) {
	l.stateMu.Lock()
	defer l.stateMu.Unlock()
	return l.failedAt.After(l.okAt), l.failedAt, l.failure
}

// dropped reports when a record was last dropped for want of room (zero:
// never).
func (l *resultsLog) dropped() time.Time {
	if ns := l.droppedAt.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// swap makes f (nil: none) the file records go to from now on, and
// closes the previous one: a reload reopens the path, so a log rotated
// away is let go.
func (l *resultsLog) swap(f *os.File) {
	l.mu.Lock()
	old := l.f
	l.f = f
	l.enabled.Store(f != nil)
	l.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// add queues one line (with its newline) without waiting; a full queue
// drops it.
func (l *resultsLog) add(line []byte) {
	n := int64(len(line))
	if l.queued.Add(n) > l.maxBytes {
		l.queued.Add(-n)
		l.drop()
		return
	}
	select {
	case l.queue <- line:
	default:
		l.queued.Add(-n)
		l.drop()
	}
}

func (l *resultsLog) drop() {
	l.droppedAt.Store(time.Now().UnixNano())
	l.onDrop()
}

// close writes what is queued, then closes the file. No add may follow.
func (l *resultsLog) close() {
	close(l.queue)
	<-l.done
	l.swap(nil)
}

// writeLine appends line with one write call. When the write stops part
// way (a full disk, a file size limit), the file is cut back to where it
// was, or, if it cannot be cut, the partial line is ended so that the
// lines after it still parse.
func writeLine(f *os.File, line []byte) error {
	var size int64 = -1
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	n, err := f.Write(line)
	if err == nil || n == 0 {
		return err
	}
	if size >= 0 {
		if terr := f.Truncate(size); terr == nil {
			return err
		}
	}
	if _, nerr := f.Write([]byte("\n")); nerr != nil {
		return errors.Join(err, fmt.Errorf("a partial line of %d bytes is left unterminated: %w", n, nerr))
	}
	return fmt.Errorf("%w (a partial line of %d bytes was left, ended by a newline)", err, n)
}
