package rulesdb

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// backoff is the wait before retry number attempt (1-based): exponential from retryMin to
// retryMax, with full jitter over its upper half.
func backoff(attempt int) time.Duration {
	d := retryMax
	if attempt < 20 {
		d = min(retryMax, retryMin<<(attempt-1))
	}
	return d/2 + rand.N(d/2+1)
}

// retryable reports whether a failed write may succeed later: the database did not answer
// (a network error, a timeout, a restart, a connection limit) or had a passing conflict.
// An error about the record itself (a value PostgreSQL will not store) is not.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if pe := pq.As(err); pe != nil {
		switch pe.Code.Class() {
		case "08", // connection exception
			"40", // transaction rollback: serialization failure, deadlock
			"53", // insufficient resources: too many connections, disk full
			"55", // object not in prerequisite state: lock not available
			"57", // operator intervention: shutdown, cannot connect now
			"58", // system error
			"XX": // internal error
			return true
		}
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN:
			return true
		}
		return false
	}
	return true
}
