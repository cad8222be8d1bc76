package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/rulefile"
	"github.com/streamrules/streamrules/rulesdb"
)

// usageError: the command never started (a bad flag, argument, DSN or configuration).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// invalidError: the input was read and is invalid; what is wrong was already said.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }

// exitCode is the one place errors become exit codes: 0 done (or --help), 2 bad usage or
// invalid input (a rule file, a rule, a DSN, a transcript line), 1 anything else that
// failed while running.
func exitCode(err error) int {
	var (
		ue *usageError
		ie *invalidError
		fe *rulefile.Error
		ve *streamrules.ValidationError
		le *replay.LineError
		ob *overBudgetError
		he *holdsError
		te *testFailedError
	)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ob), errors.As(err, &he), errors.As(err, &te):
		return 1 // valid files whose rules exceed validate's --budget, hold under --stream or fail their tests: it ran and said no
	case errors.Is(err, streamrules.ErrExists):
		return 1 // the store said no: the name is taken (a *ValidationError on "name" too)
	case errors.As(err, &ue), errors.As(err, &ie), errors.As(err, &fe), errors.As(err, &ve), errors.As(err, &le),
		errors.Is(err, rulesdb.ErrUnknownScheme), errors.Is(err, rulesdb.ErrBadDSN):
		return 2
	}
	return 1
}

// isUsage reports whether the error calls for a pointer to --help.
func isUsage(err error) bool {
	var ue *usageError
	return errors.As(err, &ue)
}
