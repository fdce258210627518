package node

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// The internode wire format: frames of [uvarint payload length][kind][payload].
// The data path's messages (replica writes, reads and their answers: one or
// more per client operation) use a compact binary encoding; everything else
// (metadata, streaming, topology operations) stays gob-encoded on one gob
// stream per connection, carried inside frames. gob's reflection was about a
// tenth of a node's CPU per client operation (issue 17's profile).

const (
	frameGob  byte = 0
	frameFast byte = 1
	// maxFrame bounds a frame's claimed length (a scan answer is a few MiB).
	maxFrame = 1 << 30
)

// fastEncodable reports whether m carries only what the binary encoding has.
func fastEncodable(m *msg) bool {
	return m.Heartbeat == nil && m.Meta == nil && m.Coord == nil && m.Stream == nil && m.Scan == nil &&
		m.KVs == nil && m.Next == nil && m.Table == [16]byte{} && m.Bytes == 0 && m.Range == nil && m.RangeRows == nil
}

// frameWriter encodes messages into frames on w.
type frameWriter struct {
	w   io.Writer
	gb  bytes.Buffer
	enc *gob.Encoder
	buf []byte
}

func newFrameWriter(w io.Writer) *frameWriter {
	fw := &frameWriter{w: w}
	fw.enc = gob.NewEncoder(&fw.gb)
	return fw
}

func (fw *frameWriter) write(m *msg) error {
	var kind byte
	var payload []byte
	if fastEncodable(m) {
		kind = frameFast
		fw.buf = appendFast(fw.buf[:0], m)
		payload = fw.buf
	} else {
		kind = frameGob
		fw.gb.Reset()
		if err := fw.enc.Encode(m); err != nil {
			return err
		}
		payload = fw.gb.Bytes()
	}
	var hdr [binary.MaxVarintLen64 + 1]byte
	n := binary.PutUvarint(hdr[:], uint64(len(payload)))
	hdr[n] = kind
	if _, err := fw.w.Write(hdr[:n+1]); err != nil {
		return err
	}
	_, err := fw.w.Write(payload)
	return err
}

// frameReader decodes frames from a buffered reader.
type frameReader struct {
	r   bufioReader
	cur sliceReader
	dec *gob.Decoder
}

// bufioReader is what frameReader needs of a bufio.Reader.
type bufioReader interface {
	io.Reader
	io.ByteReader
}

func newFrameReader(r bufioReader) *frameReader {
	fr := &frameReader{r: r}
	fr.dec = gob.NewDecoder(&fr.cur)
	return fr
}

func (fr *frameReader) read(m *msg) error {
	r := fr.r
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return err
	}
	if n > maxFrame {
		return fmt.Errorf("internode frame of %d bytes exceeds %d", n, maxFrame)
	}
	kind, err := r.ReadByte()
	if err != nil {
		return err
	}
	// A fresh buffer per frame: decoded byte slices alias it.
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return err
	}
	switch kind {
	case frameFast:
		return decodeFast(payload, m)
	case frameGob:
		fr.cur = sliceReader{b: payload}
		if err := fr.dec.Decode(m); err != nil {
			return err
		}
		if len(fr.cur.b) != 0 {
			return errors.New("internode gob frame has trailing bytes")
		}
		return nil
	}
	return fmt.Errorf("unknown internode frame kind %d", kind)
}

// sliceReader serves one frame's payload to the gob decoder (an
// io.ByteReader, so gob does not wrap it in a read-ahead buffer).
type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

func (s *sliceReader) ReadByte() (byte, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c, nil
}

// ---- the binary encoding ----

const (
	hasMuts byte = 1 << iota
	hasRead
	hasRows
	isResp
	hasTemp
)

func appendFast(b []byte, m *msg) []byte {
	var flags byte
	if m.Muts != nil {
		flags |= hasMuts
	}
	if m.Read != nil {
		flags |= hasRead
	}
	if m.Rows != nil {
		flags |= hasRows
	}
	if m.Resp {
		flags |= isResp
	}
	if m.Temp != 0 {
		flags |= hasTemp
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, m.ID)
	b = appendStr(b, m.Op)
	b = appendStr(b, m.Err)
	b = binary.AppendVarint(b, int64(m.ErrCode))
	b = binary.AppendUvarint(b, uint64(m.CL))
	if m.Muts != nil {
		b = binary.AppendUvarint(b, uint64(len(m.Muts)))
		for i := range m.Muts {
			b = appendMutation(b, &m.Muts[i])
		}
	}
	if r := m.Read; r != nil {
		b = appendStr(b, r.Keyspace)
		b = appendStr(b, r.Table)
		b = appendBytes(b, r.PartitionKey)
		b = appendBytes(b, r.ClusteringPrefix)
		b = binary.AppendVarint(b, int64(r.Limit))
		if r.CellMeta {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	if m.Rows != nil {
		b = binary.AppendUvarint(b, uint64(len(m.Rows)))
		for i := range m.Rows {
			r := &m.Rows[i]
			b = appendBytes(b, r.Clustering)
			b = appendCells(b, r.Cells)
			b = binary.AppendVarint(b, r.Timestamp)
			b = binary.AppendUvarint(b, uint64(len(r.Meta)))
			for k, cm := range r.Meta {
				b = appendStr(b, k)
				b = binary.AppendVarint(b, cm.Timestamp)
				b = binary.AppendVarint(b, cm.Expiry)
			}
		}
	}
	if m.Temp != 0 {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(m.Temp))
	}
	return b
}

func appendMutation(b []byte, mu *engine.Mutation) []byte {
	b = appendStr(b, mu.Keyspace)
	b = appendStr(b, mu.Table)
	b = appendBytes(b, mu.PartitionKey)
	b = appendBytes(b, mu.Clustering)
	b = appendCells(b, mu.Cells)
	if mu.Counters == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(mu.Counters)))
		for k, v := range mu.Counters {
			b = appendStr(b, k)
			b = binary.AppendVarint(b, v)
		}
	}
	if mu.Delete {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendVarint(b, mu.Timestamp)
	return binary.AppendVarint(b, int64(mu.TTL))
}

// appendBytes keeps nil and empty apart (a nil cell is a null).
func appendBytes(b, v []byte) []byte {
	if v == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendCells(b []byte, cells map[string][]byte) []byte {
	if cells == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(cells))+1)
	for k, v := range cells {
		b = appendStr(b, k)
		b = appendBytes(b, v)
	}
	return b
}

var errShortFrame = errors.New("internode frame is truncated")

type fastDecoder struct {
	b   []byte
	err error
}

func (d *fastDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShortFrame
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *fastDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShortFrame
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *fastDecoder) byte1() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errShortFrame
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *fastDecoder) raw(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShortFrame
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *fastDecoder) uint32() uint32 {
	b := d.raw(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *fastDecoder) str() string { return string(d.raw(d.uvarint())) }

func (d *fastDecoder) bytes() []byte {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	return d.raw(n - 1)
}

// count reads a length and checks it against the bytes left (each element
// takes at least one byte), so a corrupt length cannot allocate much.
func (d *fastDecoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = errShortFrame
		return 0
	}
	return int(n)
}

func (d *fastDecoder) cells() map[string][]byte {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	n--
	if n > uint64(len(d.b)) {
		d.err = errShortFrame
		return nil
	}
	m := make(map[string][]byte, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		k := d.str()
		m[k] = d.bytes()
	}
	return m
}

func decodeFast(b []byte, m *msg) error {
	d := &fastDecoder{b: b}
	flags := d.byte1()
	m.Resp = flags&isResp != 0
	m.ID = d.uvarint()
	m.Op = d.str()
	m.Err = d.str()
	ec := d.varint()
	if ec < math.MinInt32 || ec > math.MaxInt32 {
		return errors.New("internode frame has an invalid error code")
	}
	m.ErrCode = int(ec)
	m.CL = engine.Consistency(d.uvarint())
	if flags&hasMuts != 0 {
		n := d.count()
		m.Muts = make([]engine.Mutation, n)
		for i := 0; i < n && d.err == nil; i++ {
			mu := &m.Muts[i]
			mu.Keyspace = d.str()
			mu.Table = d.str()
			mu.PartitionKey = d.bytes()
			mu.Clustering = d.bytes()
			mu.Cells = d.cells()
			if d.byte1() == 1 {
				k := d.count()
				mu.Counters = make(map[string]int64, k)
				for j := 0; j < k && d.err == nil; j++ {
					name := d.str()
					mu.Counters[name] = d.varint()
				}
			}
			mu.Delete = d.byte1() == 1
			mu.Timestamp = d.varint()
			mu.TTL = time.Duration(d.varint())
		}
	}
	if flags&hasRead != 0 {
		r := &engine.Read{}
		r.Keyspace = d.str()
		r.Table = d.str()
		r.PartitionKey = d.bytes()
		r.ClusteringPrefix = d.bytes()
		r.Limit = int(d.varint())
		r.CellMeta = d.byte1() == 1
		m.Read = r
	}
	if flags&hasRows != 0 {
		n := d.count()
		m.Rows = make([]engine.Row, n)
		for i := 0; i < n && d.err == nil; i++ {
			r := &m.Rows[i]
			r.Clustering = d.bytes()
			r.Cells = d.cells()
			r.Timestamp = d.varint()
			if k := d.count(); k > 0 {
				r.Meta = make(map[string]engine.CellMeta, k)
				for j := 0; j < k && d.err == nil; j++ {
					name := d.str()
					r.Meta[name] = engine.CellMeta{Timestamp: d.varint(), Expiry: d.varint()}
				}
			}
		}
	}
	if flags&hasTemp != 0 {
		m.Temp = math.Float32frombits(d.uint32())
	}
	if d.err != nil {
		return d.err
	}
	if len(d.b) != 0 {
		return errors.New("internode frame has trailing bytes")
	}
	return nil
}
