package cql_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/gocql/gocql"
)

// Tuples (cql3/tuples.cc; shown frozen in system_schema), durations
// (duration_type_impl: months, days, nanoseconds as vints; not in a
// primary key, create_table_statement.cc) and literals of date, time and
// decimal, read back through the Go driver's own decoding.
func TestTupleDurationAndLiterals(t *testing.T) {
	hp, s, exec := memorySession(t, "types", "127.0.1.48:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (k int PRIMARY KEY, tup frozen<tuple<int, text>>, d duration, day date, tm time, dec decimal)`)
	var typ string
	if err := s.Query(`SELECT type FROM system_schema.columns WHERE keyspace_name = 'ks' AND table_name = 't' AND column_name = 'tup'`).Scan(&typ); err != nil || typ != "frozen<tuple<int, text>>" {
		t.Errorf("tuple column type %q %v", typ, err)
	}
	exec(`INSERT INTO ks.t (k, tup, d, day, tm, dec) VALUES (1, (?, ?), 1y2mo3d4h5m6s789ms, '2024-02-29', '08:12:54.123', 12.345)`, 7, "seven")
	exec(`INSERT INTO ks.t (k, tup) VALUES (2, (3, null))`)
	var n int
	var str string
	var d gocql.Duration
	var day, tm time.Time
	var dur time.Duration
	if err := s.Query(`SELECT tup, d, day, tm FROM ks.t WHERE k = 1`).Scan(&n, &str, &d, &day, &dur); err != nil {
		t.Fatal(err)
	}
	_ = tm
	// decimal: scale 3, unscaled 12345 (0x3039).
	rows, ok := rawQuery(t, dialRaw(t, hp), `SELECT dec FROM ks.t WHERE k = 1`).(*message.RowsResult)
	if !ok || len(rows.Data) != 1 || string(rows.Data[0][0]) != "\x00\x00\x00\x03\x30\x39" {
		t.Errorf("decimal 12.345: %v", rows)
	}
	if n != 7 || str != "seven" {
		t.Errorf("tuple (%d, %q), want (7, seven)", n, str)
	}
	if d.Months != 14 || d.Days != 3 || d.Nanoseconds != int64(4*time.Hour+5*time.Minute+6*time.Second+789*time.Millisecond) {
		t.Errorf("duration %+v", d)
	}
	if day.Format("2006-01-02") != "2024-02-29" || dur != 8*time.Hour+12*time.Minute+54*time.Second+123*time.Millisecond {
		t.Errorf("date %v, time %v", day, dur)
	}
	var str2 *string
	if err := s.Query(`SELECT tup FROM ks.t WHERE k = 2`).Scan(&n, &str2); err != nil || n != 3 || str2 != nil {
		t.Errorf("tuple with a null element: %d %v %v", n, str2, err)
	}
	if err := s.Query(`CREATE TABLE ks.bad (k duration PRIMARY KEY)`).Exec(); err == nil || !strings.Contains(err.Error(), "duration type is not supported for PRIMARY KEY part k") {
		t.Errorf("duration key: %v", err)
	}
}

// The time and uuid functions of cql3/functions/time_uuid_fcts.hh and
// uuid_fcts.hh, in values, conditions and selections.
func TestTimeFunctions(t *testing.T) {
	_, s, exec := memorySession(t, "fcts", "127.0.1.49:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND tablets = {'enabled': false}`)
	exec(`CREATE TABLE ks.t (k int PRIMARY KEY, id timeuuid, at timestamp, u uuid)`)
	before := time.Now().Add(-time.Second)
	if err := s.Query(`INSERT INTO ks.t (k, id, at, u) VALUES (1, now(), dateOf(now()), uuid())`).Exec(); err != nil {
		t.Fatal(err)
	}
	var id, u gocql.UUID
	var at time.Time
	if err := s.Query(`SELECT id, at, u FROM ks.t WHERE k = 1`).Scan(&id, &at, &u); err != nil {
		t.Fatal(err)
	}
	if id.Version() != 1 || id.Time().Before(before) || at.Before(before) || at.After(time.Now().Add(time.Second)) || u.Version() != 4 {
		t.Errorf("now() %v (time %v), dateOf(now()) %v, uuid() %v", id, id.Time(), at, u)
	}
	if err := s.Query(`UPDATE ks.t SET at = '2020-01-01' WHERE k = 1`).Exec(); err != nil {
		t.Fatal(err)
	}
	if applied, err := s.Query(`UPDATE ks.t SET at = toTimestamp(now()) WHERE k = 1 IF at = toTimestamp(now())`).MapScanCAS(map[string]any{}); err != nil || applied {
		t.Errorf("conditional update on toTimestamp(now()): applied %v, %v", applied, err)
	}
	if applied, err := s.Query(`UPDATE ks.t SET at = toTimestamp(now()) WHERE k = 1 IF at < toTimestamp(now())`).MapScanCAS(map[string]any{}); err != nil || !applied {
		t.Errorf("conditional update IF at < toTimestamp(now()): applied %v, %v", applied, err)
	}
	var unix int64
	var at2 time.Time
	if err := s.Query(`SELECT toUnixTimestamp(at), at FROM ks.t WHERE k = 1`).Scan(&unix, &at2); err != nil || unix != at2.UnixMilli() {
		t.Errorf("toUnixTimestamp(at) %d for %v: %v", unix, at2, err)
	}
	if err := s.Query(`SELECT toUnixTimestamp(u) FROM ks.t WHERE k = 1`).Exec(); err == nil || !strings.Contains(err.Error(), "Type error: uuid cannot be passed as argument 0 of function system.tounixtimestamp") {
		t.Errorf("toUnixTimestamp of a uuid: %v", err)
	}
	var now []byte
	iter := s.Query(`SELECT now() FROM system.local`).Iter()
	if cols := iter.Columns(); len(cols) != 1 || cols[0].Name != "system.now()" {
		t.Errorf("now() column: %+v", cols)
	}
	if !iter.Scan(&now) || len(now) != 16 {
		t.Errorf("SELECT now(): %x", now)
	}
	iter.Close()
	if err := s.Query(`INSERT INTO ks.t (k, at) VALUES (2, now())`).Exec(); err == nil || !strings.Contains(err.Error(), "Type error: cannot assign result of function system.now (type timeuuid) to at (type timestamp)") {
		t.Errorf("now() into a timestamp: %v", err)
	}
}

// Named bind values are placed by their markers' names
// (cql3/query_options.cc prepare); a :name marker's variable is named
// after it, a ? marker's after its column.
func TestNamedValues(t *testing.T) {
	_, s, exec := memorySession(t, "named", "127.0.1.50:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (id int PRIMARY KEY, value text)`)
	if err := s.Query(`INSERT INTO ks.t (id, value) VALUES (:key, :v)`, gocql.NamedValue("key", 1), gocql.NamedValue("v", "named")).Exec(); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := s.Query(`SELECT value FROM ks.t WHERE id = :key`, gocql.NamedValue("key", 1)).Scan(&v); err != nil || v != "named" {
		t.Errorf("read back by a named value: %q %v", v, err)
	}
	if err := s.Query(`SELECT value FROM ks.t WHERE id = :key`, gocql.NamedValue("other", 1)).Exec(); err == nil || !strings.Contains(err.Error(), "Missing value for bind marker with name: key") {
		t.Errorf("a missing named value: %v", err)
	}
}

// User-defined types: CREATE TYPE, system_schema.types
// (db/schema_tables.cc), UDT columns with the type's fields in the result
// metadata, values round-tripped through the Go driver's UDT encoding, and
// DROP TYPE refused while a table uses it (drop_type_statement.cc).
func TestUserDefinedTypes(t *testing.T) {
	_, s, exec := memorySession(t, "udt", "127.0.1.51:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TYPE ks.point (x int, y int, label text)`)
	exec(`CREATE TYPE IF NOT EXISTS ks.point (x int)`)
	exec(`CREATE TABLE ks.t (k int PRIMARY KEY, p frozen<point>, ps list<frozen<point>>)`)
	var names, types []string
	if err := s.Query(`SELECT field_names, field_types FROM system_schema.types WHERE keyspace_name = 'ks' AND type_name = 'point'`).Scan(&names, &types); err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "x,y,label" || strings.Join(types, ",") != "int,int,text" {
		t.Errorf("system_schema.types: %v %v", names, types)
	}
	in := map[string]any{"x": 1, "y": 2, "label": "a"}
	if err := s.Query(`INSERT INTO ks.t (k, p, ps) VALUES (1, ?, ?)`, in, []map[string]any{in, in}).Exec(); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	var list []map[string]any
	if err := s.Query(`SELECT p, ps FROM ks.t WHERE k = 1`).Scan(&out, &list); err != nil {
		t.Fatal(err)
	}
	if out["x"] != 1 || out["y"] != 2 || out["label"] != "a" || len(list) != 2 || list[1]["label"] != "a" {
		t.Errorf("UDT read back: %v %v", out, list)
	}
	if err := s.Query(`DROP TYPE ks.point`).Exec(); err == nil || !strings.Contains(err.Error(), "Cannot drop user type ks.point as it is still used by table ks.t") {
		t.Errorf("DROP TYPE of a used type: %v", err)
	}
	if err := s.Query(`CREATE TYPE ks.point (x int)`).Exec(); err == nil || !strings.Contains(err.Error(), "A user type of name ks.point already exists") {
		t.Errorf("CREATE TYPE of an existing type: %v", err)
	}
}

// A quoted user type name keeps its case and any character (Cql.g
// userTypeName; types.cc prints it with maybe_quote, test/cqlpy
// test_describe.py test_table_options_quoting); unquoted, the name is
// lower-cased and names another type.
func TestQuotedUserTypeName(t *testing.T) {
	_, s, exec := memorySession(t, "udtq", "127.0.1.239:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TYPE ks."MyType" (a int)`)
	exec(`CREATE TYPE ks."odd; DROP, x<y>" (b int)`)
	exec(`CREATE TABLE ks.t (k int PRIMARY KEY, v frozen<"MyType">, w list<frozen<ks."odd; DROP, x<y>">>)`)
	exec(`INSERT INTO ks.t (k, v, w) VALUES (1, {a: 5}, [{b: 6}])`)
	v := map[string]any{}
	var w []map[string]any
	if err := s.Query(`SELECT v, w FROM ks.t WHERE k = 1`).Scan(&v, &w); err != nil || v["a"] != 5 || len(w) != 1 || w[0]["b"] != 6 {
		t.Errorf("read back: %v %v %v", v, w, err)
	}
	var desc string
	if err := s.Query(`DESC TABLE ks.t`).Scan(nil, nil, nil, &desc); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`v frozen<"MyType">,`, `w list<frozen<"odd; DROP, x<y>">>,`} {
		if !strings.Contains(desc, part) {
			t.Errorf("DESC TABLE lacks %q:\n%s", part, desc)
		}
	}
	if err := s.Query(`CREATE TABLE ks.u (k int PRIMARY KEY, v frozen<MyType>)`).Exec(); err == nil {
		t.Errorf("unquoted MyType (mytype) resolved to \"MyType\"")
	}
}

// Duration literals in every form types/duration.cc parses and
// cql3/Cql.g's DURATION token lexes (test/cqlpy test_type_duration.py):
// units in decreasing order, the ISO 8601 forms (case-sensitive), a sign
// on the whole literal only, and duration.cc's own errors.
func TestDurationForms(t *testing.T) {
	_, s, exec := memorySession(t, "durations", "127.0.1.54:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (k int PRIMARY KEY, d duration)`)
	h := int64(time.Hour)
	for i, c := range []struct {
		lit  string
		want gocql.Duration
	}{
		{"1y2mo3w4d5h6m7s8ms9us10ns", gocql.Duration{Months: 14, Days: 25, Nanoseconds: 5*h + 6*int64(time.Minute) + 7*int64(time.Second) + 8e6 + 9e3 + 10}},
		{"-2d10h", gocql.Duration{Days: -2, Nanoseconds: -10 * h}},
		{"P1Y2DT3H", gocql.Duration{Months: 12, Days: 2, Nanoseconds: 3 * h}},
		{"P3W", gocql.Duration{Days: 21}},
		{"P0001-03-04T05:06:07", gocql.Duration{Months: 15, Days: 4, Nanoseconds: 5*h + 6*int64(time.Minute) + 7*int64(time.Second)}},
	} {
		exec(`INSERT INTO ks.t (k, d) VALUES (?, `+c.lit+`)`, i)
		var got gocql.Duration
		if err := s.Query(`SELECT d FROM ks.t WHERE k = ?`, i).Scan(&got); err != nil || got != c.want {
			t.Errorf("%s: got %+v %v, want %+v", c.lit, got, err, c.want)
		}
	}
	for _, c := range []struct{ lit, err string }{
		{"2m3m", "Invalid duration. The minutes are specified multiple times"},
		{"12s3m", "Invalid duration. The seconds should be after minutes"},
		{"1y-2mo", "-2mo"},        // the sign belongs to the whole literal: a syntax error
		{"0.5y", "Syntax error"},  // counts are integers
		{"P1y2D", "Syntax error"}, // ISO designators are upper-case: an identifier
		{"P2Y3W", "Syntax error"}, // weeks do not mix with other designators
		{"1µs", "Syntax error"},   // scylladb #8001: the byte-level lexer refuses µ
		{"'1h'", `Invalid STRING constant (1h) for "d" of type duration`}, // prepare_expr.cc: strings do not assign to durations
	} {
		err := s.Query(`INSERT INTO ks.t (k, d) VALUES (100, ` + c.lit + `)`).Exec()
		if c.err == "Syntax error" && code(err) == gocql.ErrCodeSyntax {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: got %v, want an error with %q", c.lit, err, c.err)
		}
	}
}

// Timestamp, date and time literals as types/types.cc parses them
// (timestamp_from_string, simple_date_type_impl and time_type_impl
// from_string_view; test/cqlpy test_type_timestamp.py, test_type_date.py,
// test_type_time.py), including their errors.
func TestDateTimeLiterals(t *testing.T) {
	hp, s, exec := memorySession(t, "datetime", "127.0.1.55:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (k int PRIMARY KEY, ts timestamp, d date, tm time)`)
	for i, c := range []struct {
		lit  string
		want string
	}{
		{"'2011-02-03 04:05+0000'", "2011-02-03T04:05:00Z"},
		{"'2011-02-03T05:06:17.1+0100'", "2011-02-03T04:06:17.1Z"},
		{"'2011-02-03+05:30'", "2011-02-02T18:30:00Z"},
		{"'2011-02-03  Z '", "2011-02-03T00:00:00Z"},
		{"'2011-02-03 gmt'", "2011-02-03T00:00:00Z"},
		{"1296705600000", "2011-02-03T04:00:00Z"},
	} {
		exec(`INSERT INTO ks.t (k, ts) VALUES (?, `+c.lit+`)`, i)
		var got time.Time
		if err := s.Query(`SELECT ts FROM ks.t WHERE k = ?`, i).Scan(&got); err != nil || got.UTC().Format(time.RFC3339Nano) != c.want {
			t.Errorf("%s: got %v %v, want %s", c.lit, got.UTC(), err, c.want)
		}
	}
	exec(`INSERT INTO ks.t (k, d, tm) VALUES (10, '123', '23:59:59.5')`)
	var tm time.Duration
	rows, ok := rawQuery(t, dialRaw(t, hp), `SELECT d FROM ks.t WHERE k = 10`).(*message.RowsResult)
	if !ok || len(rows.Data) != 1 || string(rows.Data[0][0]) != "\x00\x00\x00\x7b" {
		t.Errorf("date '123' is the raw day count 123: %v", rows)
	}
	if err := s.Query(`SELECT tm FROM ks.t WHERE k = 10`).Scan(&tm); err != nil || tm != 24*time.Hour-500*time.Millisecond {
		t.Errorf("time: %v %v", tm, err)
	}
	for _, c := range []struct{ col, lit, err string }{
		{"ts", "'2011-02-03 04:05:12.345678+0000'", "Milliseconds length exceeds expected (6)"},
		{"ts", "'2011-02-30'", "unable to parse date '2011-02-30'"},
		{"ts", "'2011-02-03 +05'", "Unable to parse timezone"},
		{"ts", "'an invalid timestamp'", "Unable to parse timestamp from"},
		{"d", "-123", "Unable to make unsigned int (for date) from -123"},
		{"d", "50000000000", "Unable to make unsigned int (for date) from 50000000000"},
		{"d", "'2011-02'", "Unable to coerce '2011-02' to a formatted date (long)"},
		{"tm", "123", "Timestamp format must be hh:mm:ss[.fffffffff]"},
		{"tm", "'24:00:00'", "Hour out of bounds (24)."},
	} {
		err := s.Query(`INSERT INTO ks.t (k, ` + c.col + `) VALUES (11, ` + c.lit + `)`).Exec()
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s = %s: got %v, want an error with %q", c.col, c.lit, err, c.err)
		}
	}
}

// Values are validated as ScyllaDB validates them (test/cqlpy
// test_validation.py, test_empty.py): bound values by types/types.cc
// validate_visitor ("Exception while binding column …", cql3/expr/
// expression.cc), blobAs<type> by bytes_conversion_fcts.hh, ascii
// literals by from_string_visitor, empty partition keys by validation.cc,
// and untyped constants by prepare_expr.cc's assignment rules.
func TestValueValidation(t *testing.T) {
	_, s, exec := memorySession(t, "validation", "127.0.1.56:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (k text PRIMARY KEY, a ascii, tx text, i int, d date, b blob)`)
	exec(`INSERT INTO ks.t (k, i, tx, d) VALUES ('x', blobAsInt(0x0000002a), blobAsAscii(0x6869), '')`)
	var i int
	var tx string
	if err := s.Query(`SELECT i, tx FROM ks.t WHERE k = 'x'`).Scan(&i, &tx); err != nil || i != 42 || tx != "hi" {
		t.Errorf("blobAsInt(0x0000002a), blobAsAscii(0x6869): %d %q %v", i, tx, err)
	}
	for _, c := range []struct {
		q    string
		args []any
		err  string
	}{
		{`INSERT INTO ks.t (k, tx) VALUES ('y', blobAsText(0xc0))`, nil, "In call to function blobastext, value 0xc0 is not a valid binary representation for type text"},
		{`INSERT INTO ks.t (k, i) VALUES ('y', blobAsInt(0x0001))`, nil, "In call to function blobasint, value 0x0001 is not a valid binary representation for type int"},
		{`INSERT INTO ks.t (k, a) VALUES ('y', 'héllo')`, nil, "Invalid ASCII character in string literal: 'héllo'"},
		{`INSERT INTO ks.t (k, tx) VALUES ('y', ?)`, []any{[]byte{0xff}}, "Exception while binding column tx: marshaling error: Validation failed - non-UTF8 character in a UTF8 string, at byte offset 0"},
		{`INSERT INTO ks.t (k, i) VALUES ('', 1)`, nil, "Key may not be empty"},
		{`UPDATE ks.t SET i = 1 WHERE k = ''`, nil, "Key may not be empty"},
		{`INSERT INTO ks.t (k, b) VALUES ('y', '')`, nil, `Invalid STRING constant () for "b" of type blob`},
	} {
		err := s.Query(c.q, c.args...).Exec()
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: got %v, want an error with %q", c.q, err, c.err)
		}
	}
}

// Frozen collections and decimals as key components (test/cqlpy
// test_frozen_collection.py, test_type_decimal.py): a frozen set clusters
// element by element and is stored sorted whatever order it was sent in;
// a non-frozen collection is refused (create_table_statement.cc); decimal
// clustering keys are compared by value.
func TestCollectionAndDecimalKeys(t *testing.T) {
	_, s, exec := memorySession(t, "keys", "127.0.1.58:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	if err := s.Query(`CREATE TABLE ks.bad (a int, b set<int>, PRIMARY KEY (a, b))`).Exec(); err == nil || !strings.Contains(err.Error(), "Invalid non-frozen collection type for PRIMARY KEY component b") {
		t.Errorf("non-frozen set key: %v", err)
	}
	exec(`CREATE TABLE ks.fs (a int, b frozen<set<int>>, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (b DESC)`)
	exec(`INSERT INTO ks.fs (a, b) VALUES (0, {3, 1, 2})`)
	exec(`INSERT INTO ks.fs (a, b) VALUES (0, ?)`, []int{4, 2, 3})
	var got [][]int
	iter := s.Query(`SELECT b FROM ks.fs WHERE a = 0`).Iter()
	var b []int
	for iter.Scan(&b) {
		got = append(got, b)
	}
	if err := iter.Close(); err != nil || len(got) != 2 || fmt.Sprint(got) != "[[2 3 4] [1 2 3]]" {
		t.Errorf("frozen set clustering DESC: %v %v", got, err)
	}
	exec(`CREATE TABLE ks.dec (p int, c decimal, v text, PRIMARY KEY (p, c))`)
	exec(`INSERT INTO ks.dec (p, c, v) VALUES (1, 1230, 'a')`)
	exec(`INSERT INTO ks.dec (p, c, v) VALUES (1, 1.23e3, 'b')`) // the same value: overwrites
	exec(`INSERT INTO ks.dec (p, c, v) VALUES (1, -1e-1000000, 'c')`)
	var vs []string
	iter = s.Query(`SELECT v FROM ks.dec WHERE p = 1`).Iter()
	var v string
	for iter.Scan(&v) {
		vs = append(vs, v)
	}
	if err := iter.Close(); err != nil || fmt.Sprint(vs) != "[c b]" {
		t.Errorf("decimal clustering by value: %v %v", vs, err)
	}
	if err := s.Query(`INSERT INTO ks.dec (p, c) VALUES (1, 1e2147483649)`).Exec(); err == nil || !strings.Contains(err.Error(), "unable to make BigDecimal from '1e2147483649'") {
		t.Errorf("scale overflow: %v", err)
	}
}

// INSERT JSON (cql3/statements/update_statement.cc json_helpers::parse,
// types/json_utils.cc from_json_object): keys name columns
// case-insensitively unless quoted, omitted columns become null (or stay
// with DEFAULT UNSET), unknown keys are refused; the value may be bound.
func TestInsertJSON(t *testing.T) {
	_, s, exec := memorySession(t, "json", "127.0.1.59:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (id text PRIMARY KEY, age int, "State" text, tags set<text>, m map<int, boolean>, b blob)`)
	exec(`INSERT INTO ks.t JSON ?`, `{"ID": "u1", "age": 42, "\"State\"": "TX", "tags": ["b", "a", "b"], "m": {"1": true}, "b": "0x0aff"}`)
	var age int
	var state string
	var tags []string
	var m map[int]bool
	var b []byte
	if err := s.Query(`SELECT age, "State", tags, m, b FROM ks.t WHERE id = 'u1'`).Scan(&age, &state, &tags, &m, &b); err != nil ||
		age != 42 || state != "TX" || fmt.Sprint(tags) != "[a b]" || !m[1] || fmt.Sprintf("%x", b) != "0aff" {
		t.Errorf("INSERT JSON read back: %d %q %v %v %x %v", age, state, tags, m, b, err)
	}
	exec(`INSERT INTO ks.t JSON '{"id": "u1", "age": "43"}' DEFAULT UNSET`)
	if err := s.Query(`SELECT age, "State" FROM ks.t WHERE id = 'u1'`).Scan(&age, &state); err != nil || age != 43 || state != "TX" {
		t.Errorf("DEFAULT UNSET keeps the omitted columns: %d %q %v", age, state, err)
	}
	exec(`INSERT INTO ks.t JSON '{"id": "u1"}'`)
	var st *string
	if err := s.Query(`SELECT "State" FROM ks.t WHERE id = 'u1'`).Scan(&st); err != nil || st != nil {
		t.Errorf("an omitted column becomes null: %v %v", st, err)
	}
	for q, want := range map[string]string{
		`INSERT INTO ks.t JSON '{"id": "u2", "nope": 1}'`:  "JSON values map contains unrecognized column: nope",
		`INSERT INTO ks.t JSON '{"id": "u2", "b": "ff"}'`:  "Blob JSON strings must start with 0x",
		`INSERT INTO ks.t JSON '{"id": "u2", "age": 1.5}'`: "Invalid FLOAT constant",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", q, err, want)
		}
	}
}

// User type literals {field: value} (cql3/Cql.g usertypeLiteral,
// cql3/user_types.cc): fields in the type's order, a missing one null, an
// unknown one refused; a map literal with an identifier-like boolean key
// stays a map.
func TestUserTypeLiteral(t *testing.T) {
	_, s, exec := memorySession(t, "udtlit", "127.0.1.60:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TYPE ks.pt (a int, b text)`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, x frozen<pt>, m map<boolean, int>)`)
	exec(`INSERT INTO ks.t (p, x, m) VALUES (1, {b: 'two'}, {true: 1}) USING TIMESTAMP 1234`)
	var x map[string]any
	var m map[bool]int
	var wt int64
	if err := s.Query(`SELECT x, m, writetime(x) FROM ks.t WHERE p = 1`).Scan(&x, &m, &wt); err != nil ||
		x["a"] != nil && x["a"] != 0 || x["b"] != "two" || m[true] != 1 || wt != 1234 {
		t.Errorf("x %v m %v writetime %d: %v", x, m, wt, err)
	}
	if err := s.Query(`INSERT INTO ks.t (p, x) VALUES (2, {c: 1})`).Exec(); err == nil || !strings.Contains(err.Error(), "Unknown field 'c' in value of user defined type pt") {
		t.Errorf("unknown field: %v", err)
	}
}

// vector<float, N> (cql3/cql3_type.cc raw_vector, types/vector.hh): a
// custom type in result metadata named as types.cc names it, literals of
// exactly N elements, bound values of N × 4 bytes, dimension limits.
func TestVectorType(t *testing.T) {
	_, s, exec := memorySession(t, "vector", "127.0.1.61:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, v vector<float, 3>)`)
	exec(`INSERT INTO ks.t (p, v) VALUES (1, [1.5, 2, -3])`)
	exec(`INSERT INTO ks.t (p, v) VALUES (2, ?)`, []float32{4, 5, 6})
	var typ string
	if err := s.Query(`SELECT type FROM system_schema.columns WHERE keyspace_name = 'ks' AND table_name = 't' AND column_name = 'v'`).Scan(&typ); err != nil || typ != "vector<float, 3>" {
		t.Errorf("system_schema type %q %v", typ, err)
	}
	for p, want := range map[int]string{1: "[1.5 2 -3]", 2: "[4 5 6]"} {
		var v []float32
		if err := s.Query(`SELECT v FROM ks.t WHERE p = ?`, p).Scan(&v); err != nil || fmt.Sprint(v) != want {
			t.Errorf("p=%d: %v %v, want %s", p, v, err, want)
		}
	}
	for q, want := range map[string]string{
		`INSERT INTO ks.t (p, v) VALUES (3, [1, 2])`:                      "expects 3 elements but got 2",
		`CREATE TABLE ks.z (p int PRIMARY KEY, v vector<float, 0>)`:       "Vectors must have a dimension greater than 0",
		`CREATE TABLE ks.big (p int PRIMARY KEY, v vector<float, 16001>)`: "Vectors must have a dimension less than or equal to 16000",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", q, err, want)
		}
	}
}

// WRITETIME/TTL of a tuple's element or field are refused with
// cql3/expr/prepare_expr.cc's messages (test/cqlpy test_type_tuple.py
// test_writetime_on_tuple); of a frozen collection's element or frozen
// UDT's field likewise; of a non-frozen one the emulator, which keeps no
// per-element timestamps, refuses.
func TestWritetimeOfElement(t *testing.T) {
	_, s, exec := memorySession(t, "wtelem", "127.0.1.241:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TYPE ks.u (a int)`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY, t tuple<int, int>, fm frozen<map<int, int>>, m map<int, int>, fu frozen<u>, u u)`)
	for q, msg := range map[string]string{
		`SELECT WRITETIME(t[0]) FROM ks.t`: "Column t is not a map/set/list, cannot be subscripted",
		`SELECT TTL(t.a) FROM ks.t`:        "Invalid field selection: t of type",
		`SELECT WRITETIME(p[0]) FROM ks.t`: "Column p is not a map/set/list, cannot be subscripted",
		`SELECT TTL(fm[1]) FROM ks.t`:      "TTL on a subscript is only valid for non-frozen map or set columns",
		`SELECT WRITETIME(fu.a) FROM ks.t`: "WRITETIME on a field selection is only valid for non-frozen UDT columns",
		`SELECT WRITETIME(m[1]) FROM ks.t`: "WRITETIME on a subscript is not supported by the emulator",
		`SELECT TTL(u.a) FROM ks.t`:        "TTL on a field selection is not supported by the emulator",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", q, err, msg)
		}
	}
	exec(`INSERT INTO ks.t (p, t) VALUES (1, (1, 2)) USING TIMESTAMP 1234`)
	var ts int64
	if err := s.Query(`SELECT WRITETIME(t) FROM ks.t WHERE p = 1`).Scan(&ts); err != nil || ts != 1234 {
		t.Errorf("WRITETIME of the whole tuple: %d %v", ts, err)
	}
}
