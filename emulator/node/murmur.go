package node

import "github.com/elasticity-dev/elasticity/emulator/murmur3"

// Token is the Murmur3 partitioner token of a partition key serialisation
// (package emulator/murmur3, shared with the CQL front end's token(pk)).
func Token(pk []byte) int64 { return murmur3.Token(pk) }
