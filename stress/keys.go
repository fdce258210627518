package stress

import (
	"sync/atomic"

	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// Share is the binding's loader i of n loaders, (0, 1) when it runs alone.
func (b Binding) Share() (i, n int) {
	if b.Loaders <= 1 || b.Loader < 0 || b.Loader >= b.Loaders {
		return 0, 1
	}
	return b.Loader, b.Loaders
}

// KeyPicker chooses the keys of a mix's operations from the seq the
// engine hands the model (the job's global sequence number, see
// keygen.GlobalSeq): among the Keys the run has, or, without any, new keys
// 0, 1, 2 ... for writes and reads among those written. Loader i of n adds
// keys i, i+n, i+2n ... (as a fill's loaders do) and reads back its own;
// a sequential distribution walks the loader's own part of the keys.
type KeyPicker struct {
	dist    keygen.Distribution // the loader's (keygen.ForLoader)
	own     keygen.Distribution // as parsed: over the keys this loader added
	n       int64
	loader  int64
	loaders int64
	nextNew atomic.Int64 // Keys 0: this loader's next key to add, counted 0, 1, 2 ...
	written atomic.Int64 // Keys 0: keys this loader added successfully
}

// NewKeyPicker is the key picker of a binding: its Keys, its Distribution
// (keygen.Parse) and its loader share.
func NewKeyPicker(b Binding) (*KeyPicker, error) {
	d, err := keygen.Parse(b.Distribution)
	if err != nil {
		return nil, err
	}
	i, n := b.Share()
	return &KeyPicker{dist: keygen.ForLoader(d, i, n), own: d, n: b.Keys, loader: int64(i), loaders: int64(n)}, nil
}

// Adds says whether writes add new keys (the binding has no Keys): the
// model then reports each successful one with Added.
func (k *KeyPicker) Adds() bool { return k.n == 0 }

// Added counts c new keys written successfully.
func (k *KeyPicker) Added(c int64) { k.written.Add(c) }

// WriteKey is the key write seq writes.
func (k *KeyPicker) WriteKey(seq uint64) int64 {
	if k.n > 0 {
		return k.dist.Key(seq, k.n)
	}
	return (k.nextNew.Add(1)-1)*k.loaders + k.loader
}

// ReadKey is the key read seq reads.
func (k *KeyPicker) ReadKey(seq uint64) int64 {
	if k.n > 0 {
		return k.dist.Key(seq, k.n)
	}
	w := k.written.Load()
	if w == 0 {
		return k.loader
	}
	return k.own.Key(seq, w)*k.loaders + k.loader
}
