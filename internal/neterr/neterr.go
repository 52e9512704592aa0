// Package neterr makes a network error one an operator can read: the
// cause, without the wrappers that repeat the URL (query and all), the
// socket call and the addresses the message around it already names.
package neterr

import (
	"errors"
	"net"
	"net/url"
	"os"
)

// Cause returns the cause of err under net/http's *url.Error, net's
// *net.OpError and *os.SyscallError ("connection refused", "address
// already in use"); err itself when it has none of them. The result stays errors.Is-comparable
// to the errno (syscall.ECONNREFUSED, syscall.EADDRINUSE).
func Cause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		err = oe.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		err = se.Err
	}
	return err
}
