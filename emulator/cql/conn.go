package cql

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/elasticity-dev/elasticity/emulator/batchwriter"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

const (
	headerLen   = 9
	eventStream = -1
)

// outFrame is one encoded response; closeAfter makes the writer close the
// connection once it is on the wire.
type outFrame struct {
	b          []byte
	closeAfter bool
}

// conn is one client connection: a reader goroutine (serve) and request
// workers that write their responses themselves (batchwriter).
type conn struct {
	s     *Server
	nc    net.Conn
	shard int

	ctx    context.Context
	cancel context.CancelFunc

	out *batchwriter.Writer
	// br is the connection's reader, used by the goroutine reading (one at
	// a time: read); readEnded is closed when the reading has ended.
	br        *bufio.Reader
	readEnded chan struct{}
	// inlineCtx, inlineSeq and inlineState: the request the reading
	// goroutine serves (serveInline); inlineCtx and inlineSeq are used by
	// whichever goroutine reads.
	inlineCtx   context.Context
	inlineSeq   uint64
	inlineState atomic.Uint64
	// Requests run on a per-connection pool of worker goroutines that
	// grows up to MaxInFlight and shrinks when idle: long-lived workers keep
	// their grown stacks, which a goroutine per request would copy every time.
	work    chan request
	workers atomic.Int32

	// tabletsRouting: the client's STARTUP asked for TABLETS_ROUTING_V1.
	tabletsRouting atomic.Bool
	// lwtMark: the client's STARTUP asked for SCYLLA_LWT_ADD_METADATA_MARK.
	lwtMark atomic.Bool
	// comp is the frame compression STARTUP chose (nil: none).
	comp atomic.Pointer[compressor]

	mu         sync.Mutex
	startup    map[string]string // the STARTUP options (system.clients)
	version    primitive.ProtocolVersion
	keyspace   string
	user       string // the logged-in role (PasswordAuthenticator)
	registered map[primitive.EventType]bool
	subscribed bool

	closeOnce sync.Once
	reqs      sync.WaitGroup
}

func newConn(ctx context.Context, s *Server, nc net.Conn, shard int) *conn {
	ctx, cancel := context.WithCancel(ctx)
	return &conn{
		s:          s,
		nc:         nc,
		shard:      shard,
		ctx:        ctx,
		cancel:     cancel,
		out:        batchwriter.New(nc),
		work:       make(chan request),
		registered: map[primitive.EventType]bool{},
	}
}

func (c *conn) close() {
	c.closeOnce.Do(func() {
		c.cancel()
		c.out.Close()
		c.nc.Close()
	})
}

func (c *conn) getKeyspace() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.keyspace
}

func (c *conn) setKeyspace(ks string) {
	c.mu.Lock()
	c.keyspace = ks
	c.mu.Unlock()
}

func (c *conn) getUser() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.user
}

// authResponse is password_authenticator.cc's SASL PLAIN exchange: the
// token is [authzid] NUL user NUL password.
func (c *conn) authResponse(m *message.AuthResponse) message.Message {
	if !c.s.auth.password {
		return &message.ProtocolError{ErrorMessage: "Unexpected AUTH_RESPONSE: authentication is not enabled"}
	}
	parts := strings.Split(string(m.Token), "\x00")
	if len(parts) != 3 {
		return &message.AuthenticationError{ErrorMessage: "Authentication failed: malformed SASL PLAIN token"}
	}
	if err := c.s.auth.authenticate(parts[1], parts[2]); err != nil {
		return &message.AuthenticationError{ErrorMessage: err.Error()}
	}
	c.mu.Lock()
	c.user = parts[1]
	c.mu.Unlock()
	return &message.AuthSuccess{}
}

// serve serves the connection until it fails or is closed. Its reading
// starts on this goroutine and may move to others (read).
func (c *conn) serve() {
	// The connection ends with its Serve call (or the server's Close).
	go func() {
		<-c.ctx.Done()
		c.nc.Close()
	}()
	c.br = bufio.NewReaderSize(c.nc, 64<<10)
	c.readEnded = make(chan struct{})
	c.loop(request{read: true})
	<-c.readEnded
	c.close()
	c.reqs.Wait()
}

// readStatus is what reading a frame came to.
type readStatus int

const (
	frameRequest  readStatus = iota // a request to serve
	frameAnswered                   // a bad frame, answered already
	frameEnd                        // the connection ends
)

// readRequest reads the next request frame.
func (c *conn) readRequest() (request, readStatus) {
	br := c.br
	// The header is peeked and copied: read into an array through
	// io.Reader, the array escaped, an allocation per request.
	var hdr [headerLen]byte
	b, err := br.Peek(1)
	if err != nil {
		return request{}, frameEnd
	}
	version := b[0] & 0x7f
	if version < 3 {
		// v1/v2 headers have a one-byte stream id; answer in the
		// client's own version so it can read the error and downgrade.
		if b, err = br.Peek(8); err != nil {
			return request{}, frameEnd
		}
		c.sendOldVersionError(version, b[2])
		return request{}, frameEnd
	}
	if b, err = br.Peek(headerLen); err != nil {
		return request{}, frameEnd
	}
	copy(hdr[:], b)
	br.Discard(headerLen)
	flags := primitive.HeaderFlag(hdr[1])
	stream := int16(binary.BigEndian.Uint16(hdr[2:4]))
	opcode := primitive.OpCode(hdr[4])
	length := int32(binary.BigEndian.Uint32(hdr[5:9]))
	if version > 4 {
		c.sendFatal(primitive.ProtocolVersion4, stream, &message.ProtocolError{ErrorMessage: fmt.Sprintf(
			"Invalid or unsupported protocol version (%d); the lowest supported version is 3 and the greatest is 4", version)})
		return request{}, frameEnd
	}
	pv := primitive.ProtocolVersion(version)
	if hdr[0]&0x80 != 0 {
		c.sendFatal(pv, stream, &message.ProtocolError{ErrorMessage: "Invalid frame: response direction bit set in a request"})
		return request{}, frameEnd
	}
	if length < 0 || int64(length) > int64(c.s.opts.MaxFrameBytes) {
		c.s.logf("WARN", "client %s: request frame of %d bytes exceeds the maximum of %d; closing connection", c.nc.RemoteAddr(), length, c.s.opts.MaxFrameBytes)
		c.sendFatal(pv, stream, &message.ProtocolError{ErrorMessage: fmt.Sprintf(
			"Request is too big: length %d exceeds maximum allowed length %d.", length, c.s.opts.MaxFrameBytes)})
		return request{}, frameEnd
	}
	body, err := readBody(br, int(length))
	if err != nil {
		return request{}, frameEnd
	}
	if err := primitive.CheckRequestOpCode(opcode); err != nil {
		c.sendError(pv, stream, &message.ProtocolError{ErrorMessage: fmt.Sprintf("Unknown or unsupported request opcode 0x%02x", uint8(opcode))})
		return request{}, frameAnswered
	}
	if flags.Contains(primitive.HeaderFlagCompressed) {
		comp := c.comp.Load()
		if comp == nil {
			c.sendError(pv, stream, &message.ProtocolError{ErrorMessage: "Compressed frames are not supported (no compression was negotiated)"})
			return request{}, frameAnswered
		}
		if body, err = (*comp).decompress(body); err != nil {
			c.sendError(pv, stream, &message.ProtocolError{ErrorMessage: err.Error()})
			return request{}, frameAnswered
		}
		flags &^= primitive.HeaderFlagCompressed
		length = int32(len(body))
	}
	return request{h: frame.Header{Version: pv, Flags: flags, StreamId: stream, OpCode: opcode, BodyLength: length}, body: body}, frameRequest
}

// request is a connection goroutine's task: a request to serve, or (read
// set) the connection's reading.
type request struct {
	h    frame.Header // by value: one allocation less per request
	body []byte
	read bool
}

const workerIdle = 10 * time.Second

// Reading moves between the connection's goroutines. The goroutine that
// reads serves a request itself when the backend says when its requests
// wait (engine.WillWait) and the request is a plain single-statement
// EXECUTE (servesInline): at a few thousand operations per second handing
// each request to a worker woke a sleeping goroutine per request (issue
// 45). Should that request wait, the reading passes to an idle worker (or
// a new goroutine) first, and the goroutine joins the workers once the
// request is answered, so requests behind a waiting one are read and
// served meanwhile, as when every request went to a worker. Other
// requests go to workers as before.

// read reads requests until the connection ends (false: it is closed) or
// the reading passed to another goroutine while a request this goroutine
// served waited (true: it is counted among the workers again).
func (c *conn) read() bool {
	for {
		if !c.frameBuffered() {
			// The read may wait: answers queued meanwhile go out first.
			c.flush()
		}
		r, st := c.readRequest()
		if h := c.s.opts.Hold; h != nil && st == frameRequest {
			h()
		}
		switch st {
		case frameAnswered:
			continue
		case frameEnd:
			c.endReading()
			return false
		}
		if c.servesInline(r) {
			if c.serveInline(r, c.frameBuffered()) {
				return true
			}
			continue
		}
		if !c.dispatchRequest(r) {
			c.endReading()
			return false
		}
	}
}

// frameBuffered: the reader holds a whole request frame already, so
// reading it will not wait.
func (c *conn) frameBuffered() bool {
	n := c.br.Buffered()
	if n < headerLen {
		return false
	}
	h, err := c.br.Peek(headerLen)
	if err != nil || h[0]&0x7f < 3 {
		return false
	}
	return uint64(n) >= headerLen+uint64(binary.BigEndian.Uint32(h[5:9]))
}

// flush writes the answers queued (writeQueued), unless a write in
// progress carries them.
func (c *conn) flush() {
	if err := c.out.Flush(); err != nil {
		c.close()
	}
}

func (c *conn) endReading() {
	close(c.readEnded)
	c.close()
}

// servesInline: r is an EXECUTE of a prepared statement that may be served
// on the reading goroutine (prepared.inline), on a backend that says when
// its requests wait, with room under MaxInFlight.
func (c *conn) servesInline(r request) bool {
	if !c.s.waitHints || r.h.OpCode != primitive.OpCodeExecute || int(c.workers.Load()) >= c.s.opts.MaxInFlight {
		return false
	}
	id, ok := executeID(r.body)
	if !ok {
		return false
	}
	p := c.s.prepared.get(id)
	return p != nil && p.inline
}

// executeID is an EXECUTE body's statement id ([short bytes] first).
func executeID(body []byte) ([]byte, bool) {
	if len(body) < 2 {
		return nil, false
	}
	n := int(binary.BigEndian.Uint16(body))
	if len(body) < 2+n {
		return nil, false
	}
	return body[2 : 2+n], true
}

// The state of the request the reading goroutine serves: its number
// shifted left by two, or'd with one of these (inlineState).
const (
	inlineServing = iota
	inlinePassed  // it waited: the reading passed to another goroutine
	inlineServed
	inlineStatus = 3
)

// serveInline serves r on this goroutine; true when it waited and the
// reading passed to another goroutine meanwhile. The wait hook and its
// context are the connection's, made once: one request at a time is served
// on the reading goroutine, and its number in the state tells it from the
// one before, whose goroutine may still be finishing once the reading has
// passed on. A late call of the hook by a goroutine of an earlier request
// (a replica read still queued after the answer) finds that request
// served and does nothing, or the next one serving and passes the reading
// early, which only costs the wake-up it saves otherwise.
//
// more says the reader holds another whole request already: the answer is
// then queued, to be written with the answers to the requests after it in
// one write(2) (the reader flushes before it reads a frame it does not
// hold whole, or hands a request to a worker that may wait: read,
// dispatchRequest, or once maxQueued answers wait). Its other answers
// are written as a worker's.
func (c *conn) serveInline(r request, more bool) bool {
	if c.inlineCtx == nil {
		c.inlineCtx = engine.WithWaitHook(c.ctx, c.inlineWaits)
	}
	c.inlineSeq++
	seq := c.inlineSeq // c.inlineSeq is the next reader's once the reading passes on
	c.inlineState.Store(seq<<2 | inlineServing)
	mode := writeYield
	if more {
		mode = writeQueued
	}
	c.sendAs(r.h.Version, r.h.StreamId, c.execute(c.inlineCtx, &r.h, r.body), mode)
	if c.inlineState.CompareAndSwap(seq<<2|inlineServing, seq<<2|inlineServed) {
		return false
	}
	// The reading passed on while the request waited: the goroutine that
	// reads now may have flushed before the answer was queued.
	if more {
		c.flush()
	}
	return true
}

// inlineWaits is the wait hook of the request served on the reading
// goroutine: the reading passes on, and the goroutine serves like a worker
// from then on.
func (c *conn) inlineWaits() {
	s := c.inlineState.Load()
	if s&inlineStatus == inlineServing && c.inlineState.CompareAndSwap(s, s&^inlineStatus|inlinePassed) {
		c.workers.Add(1)
		c.passReading()
	}
}

// passReading hands the reading to an idle worker, or a new goroutine.
func (c *conn) passReading() {
	select {
	case c.work <- request{read: true}:
	default:
		c.reqs.Add(1)
		go c.worker(request{read: true})
	}
}

// dispatchRequest hands r to an idle worker, starts a new one below the
// in-flight bound, or waits for one to free up. It reports false when the
// connection is closing.
func (c *conn) dispatchRequest(r request) bool {
	for {
		select {
		case c.work <- r:
			return true
		default:
		}
		if int(c.workers.Load()) < c.s.opts.MaxInFlight {
			c.workers.Add(1)
			c.reqs.Add(1)
			go c.worker(r)
			return true
		}
		// Saturated: wait for a worker, re-checking in case idle ones
		// exited; answers queued go out first.
		c.flush()
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case c.work <- r:
			t.Stop()
			return true
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			return false
		}
	}
}

// worker is a goroutine of the connection's (counted in workers unless
// its first task is the reading).
func (c *conn) worker(first request) {
	defer c.reqs.Done()
	c.loop(first)
}

// loop does t, then the tasks handed to this goroutine, until it is idle
// for workerIdle or the connection ends. The goroutine is counted in
// workers but while it reads.
func (c *conn) loop(t request) {
	counted := !t.read
	defer func() {
		if counted {
			c.workers.Add(-1)
		}
	}()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		if t.read {
			if counted {
				c.workers.Add(-1)
				counted = false
			}
			if !c.read() {
				return
			}
			counted = true // serveInline counted it when the reading passed on
		} else {
			c.handle(c.ctx, &t.h, t.body)
		}
		idle.Reset(workerIdle)
		select {
		case t = <-c.work:
		case <-idle.C:
			return
		case <-c.ctx.Done():
			return
		}
	}
}

// readBody reads n bytes, growing the buffer as data arrives so a header
// that merely claims a large body does not reserve the memory up front.
func readBody(r io.Reader, n int) ([]byte, error) {
	const chunk = 64 << 10
	if n <= chunk {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	var buf bytes.Buffer
	buf.Grow(chunk)
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeMode is how an answer goes out (batchwriter): written (after
// letting concurrent producers append theirs), or queued for the reader's
// next flush, which it forces once maxQueued answers wait: an answer waits
// at most for that many requests to be served.
type writeMode int

const (
	writeYield writeMode = iota
	writeQueued
)

const maxQueued = 8

// enqueue writes f, or queues it for the write in progress; a frame that
// closes the connection is written before the close.
func (c *conn) enqueue(f outFrame) { c.enqueueAs(f, writeYield) }

func (c *conn) enqueueAs(f outFrame, mode writeMode) {
	if comp := c.comp.Load(); comp != nil {
		b, err := compressFrame(*comp, f.b)
		if err != nil {
			c.s.logf("ERROR", "compressing a response: %v", err)
			c.close()
			return
		}
		f.b = b
	}
	var err error
	switch {
	case f.closeAfter || mode == writeYield:
		err = c.out.Write(f.b, f.closeAfter)
	default:
		var n int
		if n, err = c.out.Queue(f.b); err == nil && n >= maxQueued {
			err = c.out.Flush()
		}
	}
	if err != nil || f.closeAfter {
		c.close()
	}
}

func (c *conn) encode(version primitive.ProtocolVersion, stream int16, msg message.Message, payload map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	encodeAs := version
	if payload != nil && version < primitive.ProtocolVersion4 {
		// ScyllaDB sets the custom payload flag in any version
		// (transport/server.cc make_result); the codec refuses it below
		// v4, so encode as v4 (results are the same in v3) and relabel.
		encodeAs = primitive.ProtocolVersion4
	}
	f := frame.NewFrame(encodeAs, stream, msg)
	if payload != nil {
		f.SetCustomPayload(payload)
	}
	if err := c.s.codec.EncodeFrame(f, &buf); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	b[0] = b[0]&0x80 | byte(version)
	return b, nil
}

// send encodes and queues a response; an unencodable response becomes a
// SERVER_ERROR so the client is never left waiting.
func (c *conn) send(version primitive.ProtocolVersion, stream int16, msg message.Message) {
	c.sendAs(version, stream, msg, writeYield)
}

func (c *conn) sendAs(version primitive.ProtocolVersion, stream int16, msg message.Message, mode writeMode) {
	if stream != eventStream {
		c.s.requests.Add(1)
		if _, isErr := msg.(message.Error); isErr {
			c.s.errors.Add(1)
		}
	}
	var payload map[string][]byte
	lwt := false
	if x, ok := msg.(*extended); ok {
		msg, payload, lwt = x.Message, x.payload, x.lwt
	}
	if _, ok := msg.(*message.VoidResult); ok && payload == nil {
		// The most common answer (every write), built without the codec.
		b := []byte{0x80 | byte(version), 0, byte(uint16(stream) >> 8), byte(stream), byte(primitive.OpCodeResult), 0, 0, 0, 4, 0, 0, 0, byte(primitive.ResultTypeVoid)}
		c.enqueueAs(outFrame{b: b}, mode)
		return
	}
	if r, ok := msg.(*message.RowsResult); ok && payload == nil && !lwt {
		if b, ok := encodeRows(version, stream, r); ok {
			c.enqueueAs(outFrame{b: b}, mode)
			return
		}
	}
	b, err := c.encode(version, stream, msg, payload)
	if err == nil && lwt {
		err = markLWT(b)
	}
	if err != nil {
		c.s.logf("ERROR", "encoding %T response: %v", msg, err)
		b, err = c.encode(version, stream, &message.ServerError{ErrorMessage: fmt.Sprintf("cannot encode response: %v", err)}, nil)
		if err != nil {
			c.close()
			return
		}
	}
	c.enqueueAs(outFrame{b: b}, mode)
}

// encodeRows encodes the usual answer of a read, rows on one page whose
// columns (if the client did not skip them) have primitive types, byte for
// byte as the codec does (message/result.go, result_metadata.go,
// datatype.WriteDataType) in one allocation: the codec's field-by-field
// writes (binary.Write) were five allocations per answer (issue 45). ok is
// false for other rows answers, which the codec encodes.
func encodeRows(version primitive.ProtocolVersion, stream int16, m *message.RowsResult) (b []byte, ok bool) {
	md := m.Metadata
	if md == nil || md.PagingState != nil || md.NewResultMetadataId != nil || md.ContinuousPageNumber > 0 {
		return nil, false
	}
	cols := md.Columns
	if len(cols) > 0 && int(md.ColumnCount) != len(cols) {
		return nil, false
	}
	flags, global := primitive.RowsFlagNoMetadata, false
	if len(cols) > 0 {
		flags, global = 0, sameTable(cols)
		if global {
			flags = primitive.RowsFlagGlobalTablesSpec
		}
	}
	n := headerLen + 4*4 // result kind, flags, column count, row count
	if global {
		n += 2 + len(cols[0].Keyspace) + 2 + len(cols[0].Table)
	}
	for _, c := range cols {
		if c == nil || c.Type == nil || !primitiveType(c.Type.Code(), version) {
			return nil, false
		}
		if !global {
			n += 2 + len(c.Keyspace) + 2 + len(c.Table)
		}
		n += 2 + len(c.Name) + 2
	}
	for _, row := range m.Data {
		for _, col := range row {
			n += 4 + len(col)
		}
	}
	b = make([]byte, headerLen, n)
	b[0] = 0x80 | byte(version)
	binary.BigEndian.PutUint16(b[2:4], uint16(stream))
	b[4] = byte(primitive.OpCodeResult)
	binary.BigEndian.PutUint32(b[5:9], uint32(n-headerLen))
	b = binary.BigEndian.AppendUint32(b, uint32(primitive.ResultTypeRows))
	b = binary.BigEndian.AppendUint32(b, uint32(flags))
	b = binary.BigEndian.AppendUint32(b, uint32(md.ColumnCount))
	if global {
		b = appendString(appendString(b, cols[0].Keyspace), cols[0].Table)
	}
	for _, c := range cols {
		if !global {
			b = appendString(appendString(b, c.Keyspace), c.Table)
		}
		b = appendString(b, c.Name)
		b = binary.BigEndian.AppendUint16(b, uint16(c.Type.Code()))
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(m.Data)))
	for _, row := range m.Data {
		for _, col := range row {
			if col == nil {
				b = binary.BigEndian.AppendUint32(b, 0xffffffff) // null: -1
				continue
			}
			b = binary.BigEndian.AppendUint32(b, uint32(len(col)))
			b = append(b, col...)
		}
	}
	return b, true
}

// sameTable: every column is of the first one's table (the codec's
// haveSameTable, for the global table spec flag).
func sameTable(cols []*message.ColumnMetadata) bool {
	for _, c := range cols {
		if c == nil || c.Keyspace != cols[0].Keyspace || c.Table != cols[0].Table {
			return false
		}
	}
	return true
}

// primitiveType: a type written as its code alone, valid in version.
func primitiveType(code primitive.DataTypeCode, version primitive.ProtocolVersion) bool {
	switch code {
	case primitive.DataTypeCodeCustom, primitive.DataTypeCodeList, primitive.DataTypeCodeMap, primitive.DataTypeCodeSet,
		primitive.DataTypeCodeUdt, primitive.DataTypeCodeTuple:
		return false
	}
	return primitive.CheckValidDataTypeCode(code, version) == nil
}

// appendString appends a protocol [string]: a short length, the bytes.
func appendString(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint16(b, uint16(len(s))), s...)
}

func (c *conn) sendError(version primitive.ProtocolVersion, stream int16, msg message.Error) {
	c.send(version, stream, msg)
}

// sendFatal queues an error and closes the connection once it is written.
func (c *conn) sendFatal(version primitive.ProtocolVersion, stream int16, msg message.Error) {
	b, err := c.encode(version, stream, msg, nil)
	if err != nil {
		c.close()
		return
	}
	c.enqueue(outFrame{b: b, closeAfter: true})
}

// sendOldVersionError answers a v1/v2 client in its own header format.
func (c *conn) sendOldVersionError(version, stream byte) {
	msg := fmt.Sprintf("Invalid or unsupported protocol version (%d); the lowest supported version is 3 and the greatest is 4", version)
	var body bytes.Buffer
	_ = primitive.WriteInt(int32(primitive.ErrorCodeProtocolError), &body)
	_ = primitive.WriteString(msg, &body)
	b := []byte{0x80 | version, 0, stream, byte(primitive.OpCodeError), 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[4:8], uint32(body.Len()))
	c.enqueue(outFrame{b: append(b, body.Bytes()...), closeAfter: true})
}

// handle decodes and executes one request and writes its response; ctx
// is the connection's, or the reading goroutine's (serveInline).
func (c *conn) handle(ctx context.Context, h *frame.Header, body []byte) {
	c.send(h.Version, h.StreamId, c.execute(ctx, h, body))
}

// execute decodes and executes one request; it is in flight until its
// response exists (the response may reach the client before handle returns).
func (c *conn) execute(ctx context.Context, h *frame.Header, body []byte) (resp message.Message) {
	c.s.inFlight.Add(1)
	defer c.s.inFlight.Add(-1)
	defer func() {
		if r := recover(); r != nil {
			c.s.logf("ERROR", "panic while handling %s on stream %d: %v\n%s", h.OpCode, h.StreamId, r, debug.Stack())
			resp = &message.ServerError{ErrorMessage: fmt.Sprintf("internal error: %v", r)}
		}
	}()
	msg, err := decodeRequest(h.OpCode, h.Flags, body)
	if err != nil {
		return &message.ProtocolError{ErrorMessage: fmt.Sprintf("Invalid %s message: %v", h.OpCode, err)}
	}
	return c.dispatch(ctx, h, msg)
}

func (c *conn) dispatch(ctx context.Context, h *frame.Header, msg message.Message) message.Message {
	switch m := msg.(type) {
	case *message.Options:
		return &message.Supported{Options: c.s.supported(c.shard)}
	case *message.Startup:
		if name, ok := m.Options["COMPRESSION"]; ok && name != "" {
			// transport/server.cc process_startup: from here on, this
			// connection's frames (READY too) are compressed.
			comp, err := compressorNamed(name)
			if err != nil {
				return &message.ProtocolError{ErrorMessage: err.Error()}
			}
			c.comp.Store(&comp)
		}
		// transport/server.cc process_startup: the extensions the client
		// names among those SUPPORTED lists are on for the connection.
		if _, ok := m.Options[tabletsRoutingV1]; ok && c.s.router != nil {
			c.tabletsRouting.Store(true)
		}
		if _, ok := m.Options[lwtAddMetadataMark]; ok {
			c.lwtMark.Store(true)
		}
		c.mu.Lock()
		c.startup, c.version = m.Options, h.Version
		c.mu.Unlock()
		if c.s.auth.password {
			return &message.Authenticate{Authenticator: "org.apache.cassandra.auth.PasswordAuthenticator"}
		}
		return &message.Ready{}
	case *message.Register:
		for _, t := range m.EventTypes {
			if err := primitive.CheckValidEventType(t); err != nil {
				return &message.ProtocolError{ErrorMessage: fmt.Sprintf("Invalid event type %q", t)}
			}
		}
		c.register(h.Version, m.EventTypes)
		return &message.Ready{}
	case *message.Query:
		return c.s.query(c, m)
	case *message.Prepare:
		return c.s.prepare(c, m)
	case *message.Execute:
		return c.s.executePrepared(ctx, c, m)
	case *message.Batch:
		return c.s.batch(c, m)
	case *message.AuthResponse:
		return c.authResponse(m)
	}
	return &message.ProtocolError{ErrorMessage: fmt.Sprintf("Unexpected message %s", h.OpCode)}
}

// tabletsRoutingV1 is the protocol extension under which a coordinator
// tells a driver where a tablet lives (docs/dev/protocol-extensions.md,
// transport/cql_protocol_extension.cc).
const tabletsRoutingV1 = "TABLETS_ROUTING_V1"

// lwtAddMetadataMark is the extension under which a PREPARED result marks a
// conditional statement with bit 31 of its metadata flags
// (transport/cql_protocol_extension.cc, cql3/result_set.hh
// prepared_metadata::LWT_FLAG_MASK). ScyllaDB always offers it, and the
// drivers depend on it: without it the ScyllaDB Go driver takes every
// prepared statement for an LWT (its mask is 0, and flags&0 == 0) and sends
// it to the first replica instead of a random one.
const (
	lwtAddMetadataMark = "SCYLLA_LWT_ADD_METADATA_MARK"
	lwtFlagMask        = uint32(1) << 31
)

func (s *Server) supported(shard int) map[string][]string {
	opts := map[string][]string{
		"CQL_VERSION":                {"3.3.1"},
		"COMPRESSION":                {"lz4", "snappy"},
		"PROTOCOL_VERSIONS":          {"3/v3", "4/v4"},
		"SCYLLA_SHARD":               {fmt.Sprint(shard)},
		"SCYLLA_NR_SHARDS":           {fmt.Sprint(s.opts.Shards)},
		"SCYLLA_PARTITIONER":         {"org.apache.cassandra.dht.Murmur3Partitioner"},
		"SCYLLA_SHARDING_ALGORITHM":  {"biased-token-round-robin"},
		"SCYLLA_SHARDING_IGNORE_MSB": {"12"},
		lwtAddMetadataMark:           {fmt.Sprintf("LWT_OPTIMIZATION_META_BIT_MASK=%d", lwtFlagMask)},
	}
	if s.router != nil {
		// As a key with no value (cql_server::connection process_options).
		opts[tabletsRoutingV1] = []string{}
	}
	if versionAtLeast(s.b.Local().ScyllaVersion, 2026, 3) {
		// transport/server.cc (from 2026.3): the node's host id, so a
		// driver knows whom it reached without reading system.local.
		opts["SCYLLA_HOST_ID"] = []string{uuidString(s.b.Local().HostID)}
	}
	if p := s.shardAwarePort.Load(); p > 0 {
		opts["SCYLLA_SHARD_AWARE_PORT"] = []string{fmt.Sprint(p)}
	}
	return opts
}
