package enginetest

import (
	"context"
	"net"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Faulty wraps a Backend and lets a test inject errors (or panics) into
// writes and reads. A nil hook, or a hook returning nil, delegates.
type Faulty struct {
	engine.Backend
	WriteErr func(ms []engine.Mutation, cl engine.Consistency) error
	ReadErr  func(r engine.Read, cl engine.Consistency) error
}

// Write implements engine.Backend.
func (f *Faulty) Write(ctx context.Context, ms []engine.Mutation, cl engine.Consistency) error {
	if f.WriteErr != nil {
		if err := f.WriteErr(ms, cl); err != nil {
			return err
		}
	}
	return f.Backend.Write(ctx, ms, cl)
}

// Read implements engine.Backend.
func (f *Faulty) Read(ctx context.Context, r engine.Read, cl engine.Consistency) ([]engine.Row, error) {
	if f.ReadErr != nil {
		if err := f.ReadErr(r, cl); err != nil {
			return nil, err
		}
	}
	return f.Backend.Read(ctx, r, cl)
}

// SetAddr forwards to the wrapped backend when it has an address to set.
func (f *Faulty) SetAddr(ip net.IP, port int) {
	if s, ok := f.Backend.(addrSetter); ok {
		s.SetAddr(ip, port)
	}
}
