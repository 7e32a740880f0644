//go:build !linux

package main

import "net"

// stampedReader is Linux-only (SO_TIMESTAMPNS); elsewhere the sink records
// user-space arrivals only.
type stampedReader struct{}

func keepTimestampsOn() {}

func newStampedReader(net.Conn) *stampedReader { return nil }

func (*stampedReader) read([]byte) (int, int64, error) { panic("unreachable") }
