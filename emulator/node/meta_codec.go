package node

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A tablet map is most of the cluster metadata (1,024 tablets × RF
// replicas, each naming its host by a 36-byte id), and the coordinator
// publishes a new epoch to every member at each migration round. gob's
// reflection over it was ~9% of the nodes' CPU in the main job, in bursts
// on every node at once (the coordinator encoding once per member, every
// member decoding, 3,000 host strings allocated each time), which the
// request path felt as host lag. ScyllaDB replicates only the changed rows
// of system.tablets through group 0; here the whole map still travels, but
// in a compact encoding: a table of the hosts it names, then per tablet
// indexes into it.
//
//	version(1) uvarint(hosts) {uvarint(len) host}... uvarint(tablets)
//	per tablet: uvarint(replicas) {uvarint(host) uvarint(shard)}...
//	            uvarint(pending host+1, 0 = none) [uvarint(pending shard)]
//	            uvarint(leaving host+1, 0 = none)
const tabletMapCodecVersion = 1

// GobEncode implements gob.GobEncoder.
func (tm *TabletMap) GobEncode() ([]byte, error) {
	ids := map[string]uint64{}
	var hosts []string
	idx := func(h string) uint64 {
		i, ok := ids[h]
		if !ok {
			i = uint64(len(hosts))
			ids[h] = i
			hosts = append(hosts, h)
		}
		return i
	}
	body := make([]byte, 0, 8*len(tm.Tablets))
	body = binary.AppendUvarint(body, uint64(len(tm.Tablets)))
	for i := range tm.Tablets {
		t := &tm.Tablets[i]
		body = binary.AppendUvarint(body, uint64(len(t.Replicas)))
		for _, r := range t.Replicas {
			body = binary.AppendUvarint(body, idx(r.Host))
			body = binary.AppendUvarint(body, uint64(r.Shard))
		}
		if t.Pending == nil {
			body = append(body, 0)
		} else {
			body = binary.AppendUvarint(body, idx(t.Pending.Host)+1)
			body = binary.AppendUvarint(body, uint64(t.Pending.Shard))
		}
		if t.Leaving == "" {
			body = append(body, 0)
		} else {
			body = binary.AppendUvarint(body, idx(t.Leaving)+1)
		}
	}
	out := make([]byte, 0, len(body)+40*len(hosts)+8)
	out = append(out, tabletMapCodecVersion)
	out = binary.AppendUvarint(out, uint64(len(hosts)))
	for _, h := range hosts {
		out = binary.AppendUvarint(out, uint64(len(h)))
		out = append(out, h...)
	}
	return append(out, body...), nil
}

// GobDecode implements gob.GobDecoder.
func (tm *TabletMap) GobDecode(b []byte) error {
	d := codecReader{b: b}
	if v := d.byte(); v != tabletMapCodecVersion {
		return fmt.Errorf("decoding a tablet map: unknown encoding version %d", v)
	}
	hosts := make([]string, d.count(1))
	for i := range hosts {
		hosts[i] = string(d.bytes(d.count(1)))
	}
	host := func(i uint64) string {
		if i >= uint64(len(hosts)) {
			d.fail(fmt.Errorf("host index %d of %d", i, len(hosts)))
			return ""
		}
		return hosts[i]
	}
	n := d.count(3)
	if d.err != nil || n == 0 {
		tm.Tablets = nil
		return d.wrapErr()
	}
	tablets := make([]Tablet, n)
	// One backing array for every tablet's replicas; each tablet's slice is
	// capped so that appending to it never runs into the next tablet's.
	var reps []Replica
	for i := range tablets {
		t := &tablets[i]
		if k := d.count(2); k > 0 {
			if cap(reps)-len(reps) < k {
				reps = make([]Replica, 0, max(k, 3*(n-i)))
			}
			s := len(reps)
			for range k {
				reps = append(reps, Replica{Host: host(d.uvarint()), Shard: int(d.uvarint())})
			}
			t.Replicas = reps[s:len(reps):len(reps)]
		}
		if p := d.uvarint(); p != 0 {
			t.Pending = &Replica{Host: host(p - 1), Shard: int(d.uvarint())}
		}
		if l := d.uvarint(); l != 0 {
			t.Leaving = host(l - 1)
		}
		if d.err != nil {
			return d.wrapErr()
		}
	}
	if len(d.b) != 0 {
		d.fail(errors.New("trailing bytes"))
	}
	tm.Tablets = tablets
	return d.wrapErr()
}

// codecReader reads the tablet map encoding, remembering the first error.
type codecReader struct {
	b   []byte
	err error
}

func (d *codecReader) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *codecReader) wrapErr() error {
	if d.err != nil {
		return fmt.Errorf("decoding a tablet map: %w", d.err)
	}
	return nil
}

func (d *codecReader) byte() byte {
	if len(d.b) == 0 {
		d.fail(errCorrupt)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *codecReader) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail(errCorrupt)
		return 0
	}
	d.b = d.b[k:]
	return v
}

// count reads a length whose items take at least minBytes each, so that a
// corrupt length cannot make the decoder allocate more than the input.
func (d *codecReader) count(minBytes int) int {
	v := d.uvarint()
	if v > uint64(len(d.b)/minBytes) {
		d.fail(fmt.Errorf("count %d exceeds the %d bytes left", v, len(d.b)))
		return 0
	}
	return int(v)
}

func (d *codecReader) bytes(n int) []byte {
	if n > len(d.b) {
		d.fail(errCorrupt)
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}
