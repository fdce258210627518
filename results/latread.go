package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"
)

// latencyLine is what reports need of a latency.jsonl line: the service
// histogram is skipped (JSON still scans it, but does not copy it).
type latencyLine struct {
	Start       time.Time        `json:"start"`
	End         time.Time        `json:"end"`
	Op          string           `json:"op"`
	Class       string           `json:"class,omitempty"`
	Count       int64            `json:"count"`
	Errors      map[string]int64 `json:"errors,omitempty"`
	Dropped     int64            `json:"dropped"`
	Response    Summary          `json:"response"`
	ResponseHDR string           `json:"response_hdr"`
	Source      string           `json:"source,omitempty"`
	LoaderLagMS float64          `json:"loader_lag_ms,omitempty"`
	// hdr is the response histogram as a slice of the line (fast path),
	// which saves copying it into a string.
	hdr []byte
}

// OpClass is LatencyRecord.OpClass of the line.
func (l *latencyLine) OpClass() string {
	if l.Class != "" {
		return l.Class
	}
	return l.Op
}

// decodedLine is one parsed line with its response histogram decoded.
type decodedLine struct {
	line  int
	rec   latencyLine
	pairs []packedCount
}

type lineBatch struct {
	seq      int
	first    int // line number of lines[0]
	lines    [][]byte
	tornLast bool // the last line of the file had no newline
	out      []decodedLine
	err      error
}

// readLatency parses and decodes latency.jsonl on every core (JSON and
// inflating histograms dominate a long run's report) and calls fn for every
// record in file order. Like ReadJSONL, a torn last line is ignored and any
// other bad line is a *LineError.
func readLatency(path string, fn func(line int, d *decodedLine) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	workers := max(1, runtime.GOMAXPROCS(0))
	const batchLines = 256
	done := make(chan struct{})
	defer close(done)
	work := make(chan *lineBatch, workers)
	results := make(chan *lineBatch, workers)
	// tokens bound the batches in flight (read, decoded or waiting for order).
	tokens := make(chan struct{}, 2*workers+2)
	var readErr error
	go func() {
		defer close(work)
		br := bufio.NewReaderSize(f, 1<<16)
		seq, line := 0, 0
		b := &lineBatch{first: 1}
		send := func() bool {
			select {
			case tokens <- struct{}{}:
			case <-done:
				return false
			}
			select {
			case work <- b:
			case <-done:
				return false
			}
			seq++
			b = &lineBatch{seq: seq, first: line + 1}
			return true
		}
		for {
			l, err := br.ReadBytes('\n')
			if len(l) > 0 {
				line++
				if err == io.EOF && l[len(l)-1] != '\n' {
					b.tornLast = true
				}
				b.lines = append(b.lines, l)
				if len(b.lines) == batchLines && !send() {
					return
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				readErr = fmt.Errorf("reading %s after line %d: %w", path, line, err)
				break
			}
		}
		if len(b.lines) > 0 {
			send()
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dec HDRDecoder
			for b := range work {
				b.decode(path, &dec)
				select {
				case results <- b:
				case <-done:
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	pending := map[int]*lineBatch{}
	next := 0
	for b := range results {
		pending[b.seq] = b
		for {
			b, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-tokens
			if b.err != nil {
				return b.err
			}
			for i := range b.out {
				if err := fn(b.out[i].line, &b.out[i]); err != nil {
					return err
				}
			}
		}
	}
	return readErr
}

func (b *lineBatch) decode(path string, dec *HDRDecoder) {
	b.out = make([]decodedLine, 0, len(b.lines))
	var slab []packedCount
	for i, l := range b.lines {
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		d := decodedLine{line: b.first + i}
		if parseLatencyLine(l, &d.rec) {
			// fast path
		} else if err := func() error { d.rec = latencyLine{}; return json.Unmarshal(l, &d.rec) }(); err != nil {
			if b.tornLast && i == len(b.lines)-1 {
				break // torn last line of an interrupted run
			}
			b.err = &LineError{Path: path, Line: b.first + i, Err: err}
			return
		}
		enc := d.rec.hdr
		if enc == nil && d.rec.ResponseHDR != "" {
			enc = []byte(d.rec.ResponseHDR)
		}
		if len(enc) > 0 {
			if err := dec.decode(enc); err != nil {
				b.err = &LineError{Path: path, Line: b.first + i, Err: fmt.Errorf("decoding the response histogram: %w", err)}
				return
			}
			// One slab per batch for the decoded buckets: fewer, larger allocations.
			if n := len(dec.pairs); n > 0 {
				if cap(slab)-len(slab) < n {
					slab = make([]packedCount, 0, max(n, 64*1024))
				}
				start := len(slab)
				slab = append(slab, dec.pairs...)
				d.pairs = slab[start:len(slab):len(slab)]
			}
		}
		d.rec.ResponseHDR, d.rec.hdr = "", nil // no longer needed
		b.out = append(b.out, d)
	}
	b.lines = nil
}
