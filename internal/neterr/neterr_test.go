package neterr

import (
	"errors"
	"net"
	"net/http"
	"syscall"
	"testing"
)

// Real failures, read as an operator reads them: the cause alone.
func TestCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_, err = net.Listen("tcp", addr)
	ln.Close()
	if got := Cause(err); got.Error() != "address already in use" || !errors.Is(got, syscall.EADDRINUSE) {
		t.Errorf("taken port: %q (from %q)", got, err)
	}
	// Port 1: privileged, nothing listens there.
	_, err = http.Get("http://127.0.0.1:1/api/v1/query?query=sum+by+%28region%29")
	if got := Cause(err); got.Error() != "connection refused" || !errors.Is(got, syscall.ECONNREFUSED) {
		t.Errorf("closed port: %q (from %q)", got, err)
	}
	plain := errors.New("plain")
	if Cause(plain) != plain {
		t.Error("an error with no wrapper is not itself")
	}
}
