package cql

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/klauspost/compress/s2"
	"github.com/pierrec/lz4/v4"
)

// compressor is a frame body compression of the native protocol
// (transport/server.cc: lz4 and snappy, named by STARTUP's COMPRESSION).
type compressor interface {
	compress(body []byte) ([]byte, error)
	decompress(body []byte) ([]byte, error)
}

// compressors are the algorithms SUPPORTED lists (cql_server::connection
// process_options), by their lower-case names.
var compressors = map[string]compressor{"lz4": lz4Frames{}, "snappy": snappyFrames{}}

// compressorNamed is process_startup's lookup: case-insensitive, and
// "Unknown compression algorithm: x" for any other.
func compressorNamed(name string) (compressor, error) {
	if c, ok := compressors[strings.ToLower(name)]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("Unknown compression algorithm: %s", strings.ToLower(name))
}

// lz4Frames is response::compress_lz4: the body's length, 4 bytes big
// endian, then one LZ4 block.
type lz4Frames struct{}

func (lz4Frames) compress(body []byte) ([]byte, error) {
	out := make([]byte, 4+lz4.CompressBlockBound(len(body)))
	binary.BigEndian.PutUint32(out, uint32(len(body)))
	var c lz4.Compressor
	n, err := c.CompressBlock(body, out[4:])
	if err != nil || n == 0 {
		return nil, fmt.Errorf("CQL frame LZ4 compression failure: %v", err)
	}
	return out[:4+n], nil
}

// maxUncompressed bounds what a compressed request may claim to expand to.
const maxUncompressed = 256 << 20

func (lz4Frames) decompress(body []byte) ([]byte, error) {
	if len(body) < 4 {
		return nil, errors.New("CQL frame LZ4 uncompression failure")
	}
	n := binary.BigEndian.Uint32(body)
	if n > maxUncompressed {
		return nil, fmt.Errorf("CQL frame LZ4 uncompression failure: %d bytes is too large", n)
	}
	out := make([]byte, n)
	got, err := lz4.UncompressBlock(body[4:], out)
	if err != nil || got != int(n) {
		return nil, errors.New("CQL frame LZ4 uncompression failure")
	}
	return out, nil
}

// snappyFrames is response::compress_snappy: the body as one Snappy block
// (s2 writes and reads Snappy's block format).
type snappyFrames struct{}

func (snappyFrames) compress(body []byte) ([]byte, error) { return s2.EncodeSnappy(nil, body), nil }

func (snappyFrames) decompress(body []byte) ([]byte, error) {
	if n, err := s2.DecodedLen(body); err != nil || n > maxUncompressed {
		return nil, errors.New("CQL frame Snappy uncompression failure")
	}
	out, err := s2.Decode(nil, body)
	if err != nil {
		return nil, errors.New("CQL frame Snappy uncompression failure")
	}
	return out, nil
}

// compressFrame compresses an encoded response frame's body and sets the
// header's compression flag. An empty body (READY, a void result) stays
// uncompressed: ScyllaDB compresses it to a block of nothing, which the
// flag, read per frame, makes unnecessary.
func compressFrame(c compressor, b []byte) ([]byte, error) {
	if len(b) <= headerLen {
		return b, nil
	}
	body, err := c.compress(b[headerLen:])
	if err != nil {
		return nil, err
	}
	out := make([]byte, headerLen, headerLen+len(body))
	copy(out, b[:headerLen])
	out[1] |= 0x01 // cql_frame_flags::compression
	binary.BigEndian.PutUint32(out[5:9], uint32(len(body)))
	return append(out, body...), nil
}
