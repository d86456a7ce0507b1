// Package exitcode is sentinel's one exit-code table and the
// single mapping from an error to a process exit code.
//
//	0 OK       done / safe
//	1 Error    nothing reliable was done or decided
//	2 NotNow   retry later
//	3 Blocked  a human must act
package exitcode

import (
	"errors"
	"fmt"
)

// Code is a process exit code from the table above.
type Code int

const (
	OK      Code = 0
	Error   Code = 1
	NotNow  Code = 2
	Blocked Code = 3
)

func (c Code) String() string {
	switch c {
	case OK:
		return "ok"
	case Error:
		return "error"
	case NotNow:
		return "not-now"
	case Blocked:
		return "blocked"
	}
	return fmt.Sprintf("code-%d", int(c))
}

// Err is an error that carries its exit code. A nil Err field makes it a
// silent status: the tool already wrote its answer and only the code remains.
type Err struct {
	Code Code
	Err  error
}

func (e *Err) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *Err) Unwrap() error { return e.Err }

// ExitCode satisfies urfave/cli's ExitCoder.
func (e *Err) ExitCode() int { return int(e.Code) }

// With attaches code to err. With(OK, nil) and With(c, nil) for a silent
// status are both allowed.
func With(code Code, err error) error { return &Err{Code: code, Err: err} }

// Status is a silent exit status: the answer is already on stdout.
func Status(code Code) error {
	if code == OK {
		return nil
	}
	return &Err{Code: code}
}

// Errorf formats an error with an exit code.
func Errorf(code Code, format string, args ...any) error {
	return &Err{Code: code, Err: fmt.Errorf(format, args...)}
}

// Of maps err to its exit code: nil is OK, an *Err (anywhere in the chain) its
// own code, anything else Error.
func Of(err error) Code {
	if err == nil {
		return OK
	}
	var e *Err
	if errors.As(err, &e) {
		return e.Code
	}
	return Error
}

// Message is what a tool prints for err on stderr, "" for a silent status.
func Message(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
