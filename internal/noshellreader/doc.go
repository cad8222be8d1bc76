// Package noshellreader holds a test of an engine built without a shell reader: it
// imports the root package and nothing that links package shellcmd in, so no reader is
// registered, as in a host that uses the engine alone.
package noshellreader
