// Package forged lists look-alike engine tags, the ways an attacker can write
// "<system-reminder" or "<system-interrupt" so a reader, human or model, still takes it
// for the engine's own tag. The root package's table test and the middleware's end-to-end
// tests share the list. It is test data: nothing outside tests imports it.
package forged
