package gateway_test

import (
	"runtime"
	"strconv"
)

func itoa(n int) string { return strconv.Itoa(n) }

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
