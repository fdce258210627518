package cql

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// serviceLevel is a service level's options (service/qos/qos_common.hh
// service_level_options); timeout 0 and workload "" are unset.
type serviceLevel struct {
	timeout  time.Duration
	workload string
	shares   int
}

// defaultShares is service_level_controller::default_shares.
const defaultShares = 1000

// driverServiceLevel is get_driver_service_level_slo
// (service/qos/service_level_controller.cc).
func driverServiceLevel() *serviceLevel { return &serviceLevel{workload: "batch", shares: 200} }

// describeLevels is describe_created_service_levels: the levels by name,
// then sl:driver as CREATE IF NOT EXISTS and ALTER (or DROP IF EXISTS when
// it was removed).
func (a *authStore) describeLevels() []description {
	var out []description
	for name, sl := range a.levels {
		if name != "driver" {
			out = append(out, description{typ: "service_level", name: name, stmt: sl.describe("CREATE SERVICE LEVEL", name)})
		}
	}
	sortDescs(out, false)
	if sl := a.levels["driver"]; sl != nil {
		return append(out,
			description{typ: "service_level", name: "driver", stmt: sl.describe("CREATE SERVICE LEVEL IF NOT EXISTS", "driver")},
			description{typ: "service_level", name: "driver", stmt: sl.describe("ALTER SERVICE LEVEL", "driver")})
	}
	return append(out, description{typ: "service_level", name: "driver", stmt: "DROP SERVICE LEVEL IF EXISTS driver;"})
}

// describe is describe_service_level's statement.
func (sl *serviceLevel) describe(cmd, name string) string {
	var opts []string
	if sl.timeout > 0 {
		opts = append(opts, fmt.Sprintf("TIMEOUT = %dms", sl.timeout.Milliseconds()))
	}
	if sl.workload != "" {
		opts = append(opts, "WORKLOAD_TYPE = '"+sl.workload+"'")
	}
	if sl.shares > 0 {
		opts = append(opts, "SHARES = "+strconv.Itoa(sl.shares))
	}
	if len(opts) == 0 {
		return cmd + " " + maybeQuote(name) + ";"
	}
	return cmd + " " + maybeQuote(name) + " WITH " + strings.Join(opts, " AND ") + ";"
}

// serviceLevelStmt runs the service level statements
// (cql3/statements/*_service_level_statement.cc, service_level_controller.cc).
func (ec *execCtx) serviceLevelStmt(x *cqlparse.ServiceLevelStmt) (message.Message, error) {
	a := ec.s.auth
	a.mu.Lock()
	defer a.mu.Unlock()
	switch x.Op {
	case "create", "alter":
		return nil, a.setLevel(x)
	case "drop":
		if a.levels[x.Level] == nil {
			if x.IfExists {
				return nil, nil
			}
			return nil, engine.Errorf(engine.CodeInvalid, "The service level '%s' doesn't exist.", x.Level)
		}
		delete(a.levels, x.Level)
		for _, r := range a.roles {
			if r.level == x.Level {
				r.level = ""
			}
		}
		return nil, nil
	case "list", "list all":
		return a.listLevels(x)
	case "attach", "detach":
		r, err := a.role(x.Role)
		if err != nil {
			return nil, err
		}
		if x.Op == "attach" && a.levels[x.Level] == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Service Level %s doesn't exists.", x.Level)
		}
		r.level = x.Level
		return nil, nil
	case "list attached", "list all attached":
		return a.listAttached(x)
	}
	return nil, engine.Errorf(engine.CodeSyntaxError, "unsupported service level statement %s", x.Op)
}

// setLevel is CREATE/ALTER SERVICE LEVEL with sl_prop_defs.cc's checks;
// a created level gets the default shares.
func (a *authStore) setLevel(x *cqlparse.ServiceLevelStmt) error {
	sl := a.levels[x.Level]
	switch {
	case x.Op == "create" && sl != nil && x.IfNotExists:
		return nil
	case x.Op == "create" && sl != nil:
		return engine.Errorf(engine.CodeInvalid, "The service level '%s' already exists.", x.Level)
	case x.Op == "alter" && sl == nil:
		return engine.Errorf(engine.CodeInvalid, "The service level '%s' doesn't exist.", x.Level)
	case sl == nil:
		sl = &serviceLevel{shares: defaultShares}
	}
	next := *sl
	for name, v := range x.Options {
		switch name {
		case "timeout":
			d, err := cqlparse.ParseDuration(v.Text)
			if err != nil || d%time.Millisecond != 0 {
				return engine.Errorf(engine.CodeInvalid, "Timeout values must be expressed in millisecond granularity")
			}
			next.timeout = d
		case "workload_type":
			if v.Text != "batch" && v.Text != "interactive" && v.Text != "unspecified" {
				return engine.Errorf(engine.CodeInvalid, "Invalid workload type: %s", v.Text)
			}
			next.workload = strings.TrimPrefix(v.Text, "unspecified")
		case "shares":
			n, err := strconv.Atoi(v.Text)
			if err != nil || n < 1 || n > 1000 {
				return engine.Errorf(engine.CodeSyntaxError, "'SHARES' can only take values of 1-1000 (given %s)", v.Text)
			}
			next.shares = n
		default:
			return engine.Errorf(engine.CodeSyntaxError, "Unknown property '%s'", name)
		}
	}
	a.levels[x.Level] = &next
	return nil
}

// listLevels is LIST SERVICE LEVEL name / LIST ALL SERVICE LEVELS
// (list_service_level_statement.cc).
func (a *authStore) listLevels(x *cqlparse.ServiceLevelStmt) (message.Message, error) {
	names := []string{x.Level}
	if x.Op == "list all" {
		names = names[:0]
		for n := range a.levels {
			names = append(names, n)
		}
		sort.Strings(names)
	} else if a.levels[x.Level] == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Service Level %s doesn't exists.", x.Level)
	}
	cols := []*message.ColumnMetadata{slCol("service_level", datatype.Varchar), slCol("timeout", datatype.Duration),
		slCol("workload_type", datatype.Varchar), slCol("shares", datatype.Int)}
	sum := 0
	for _, n := range names {
		sum += a.levels[n].shares
	}
	if x.Op == "list all" {
		cols = append(cols, slCol("percentage of all service level shares", datatype.Varchar))
	}
	res := &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: int32(len(cols)), Columns: cols}}
	for _, n := range names {
		sl := a.levels[n]
		row := message.Row{[]byte(n), nil, nil, encInt(sl.shares)}
		if sl.timeout > 0 {
			row[1] = encDuration(sl.timeout)
		}
		if sl.workload != "" {
			row[2] = []byte(sl.workload)
		}
		if x.Op == "list all" {
			row = append(row, []byte(fmt.Sprintf("%.2f%%", 100*float64(sl.shares)/float64(sum))))
		}
		res.Data = append(res.Data, row)
	}
	return res, nil
}

// listAttached is LIST [ALL] ATTACHED SERVICE LEVEL[S] [OF role]
// (list_effective... / list_attached_service_level_statement.cc).
func (a *authStore) listAttached(x *cqlparse.ServiceLevelStmt) (message.Message, error) {
	cols := []*message.ColumnMetadata{slCol("role", datatype.Varchar), slCol("service_level", datatype.Varchar)}
	res := &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: 2, Columns: cols}}
	var names []string
	for n, r := range a.roles {
		if r.level != "" && (x.Op == "list all attached" || n == x.Role) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		res.Data = append(res.Data, message.Row{[]byte(n), []byte(a.roles[n].level)})
	}
	return res, nil
}

func slCol(name string, t datatype.DataType) *message.ColumnMetadata {
	return &message.ColumnMetadata{Keyspace: "QOS", Table: "service_levels", Name: name, Type: t}
}

// encDuration serialises a duration of nanoseconds (0 months, 0 days) as
// CQL's duration type.
func encDuration(d time.Duration) []byte {
	return appendVInt(appendVInt(appendVInt(nil, 0), 0), d.Nanoseconds())
}
