package cql

import (
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Authenticator and authorizer names as scylla.yaml takes them.
const (
	AllowAllAuthenticator = "AllowAllAuthenticator"
	PasswordAuthenticator = "PasswordAuthenticator"
	defaultSuperuser      = "cassandra" // auth/common.cc DEFAULT_SUPERUSER_NAME
)

// roleRec is one row of system.roles with its grants (auth/
// standard_role_manager.cc, auth/default_authorizer.cc).
type roleRec struct {
	super, login bool
	hash         string // salted_hash; "" = none
	memberOf     map[string]bool
	perms        map[string]map[string]bool // resource -> permissions
	level        string                     // attached service level
}

// authStore holds the roles, grants and service levels. ScyllaDB keeps
// them in group0 tables cluster-wide; the emulator keeps them in the node
// that served the statement (each node starts with the default superuser
// and sl:driver), which is exact for one node and for any single node a
// client talks to.
type authStore struct {
	password bool // PasswordAuthenticator (else AllowAllAuthenticator)
	mu       sync.Mutex
	roles    map[string]*roleRec
	levels   map[string]*serviceLevel
}

func newAuthStore(authenticator string) *authStore {
	a := &authStore{
		password: strings.HasSuffix(authenticator, PasswordAuthenticator),
		roles:    map[string]*roleRec{},
		levels:   map[string]*serviceLevel{"driver": driverServiceLevel()},
	}
	// standard_role_manager.cc maybe_create_default_role: the default
	// superuser logs in with password "cassandra" (password_authenticator.cc).
	a.roles[defaultSuperuser] = &roleRec{super: true, login: true, hash: hashPassword(defaultSuperuser),
		memberOf: map[string]bool{}, perms: map[string]map[string]bool{}}
	return a
}

// hashPassword is passwords::hash (auth/passwords.cc): crypt(3) SHA-512
// style "$6$salt$hash". The emulator derives it with one SHA-512 round
// (not glibc's 5000-round scheme): the format and salting are ScyllaDB's,
// the hash value is not.
func hashPassword(pw string) string {
	salt := make([]byte, 12)
	rand.Read(salt)
	s := base64.RawStdEncoding.EncodeToString(salt)
	return "$6$" + s + "$" + saltedSum(s, pw)
}

func saltedSum(salt, pw string) string {
	sum := sha512.Sum512([]byte(salt + "$" + pw))
	return strings.NewReplacer("+", ".", "=", "").Replace(base64.RawStdEncoding.EncodeToString(sum[:]))
}

// checkPassword verifies pw against a hash made by hashPassword.
func checkPassword(hash, pw string) bool {
	parts := strings.Split(hash, "$")
	return len(parts) == 4 && parts[1] == "6" && saltedSum(parts[2], pw) == parts[3]
}

// authenticate is password_authenticator::authenticate.
func (a *authStore) authenticate(user, pw string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.roles[user]
	if r == nil || !r.login || r.hash == "" || !checkPassword(r.hash, pw) {
		return errBadCredentials
	}
	return nil
}

// superuser reports whether user (or a role granted to it) is a superuser.
func (a *authStore) superuser(user string) bool {
	for r := range a.granted(user, true) {
		if a.roles[r] != nil && a.roles[r].super {
			return true
		}
	}
	return false
}

// granted is the role itself and the roles granted to it (recursively).
func (a *authStore) granted(role string, recursive bool) map[string]bool {
	out := map[string]bool{}
	var walk func(string)
	walk = func(r string) {
		if out[r] || a.roles[r] == nil {
			return
		}
		out[r] = true
		if r != role && !recursive {
			return
		}
		for m := range a.roles[r].memberOf {
			walk(m)
		}
	}
	walk(role)
	return out
}

func (a *authStore) role(name string) (*roleRec, error) {
	if r := a.roles[name]; r != nil {
		return r, nil
	}
	return nil, engine.Errorf(engine.CodeInvalid, "Role %s doesn't exist.", name)
}

// describe is auth::service::describe_auth followed by the service
// levels (schema_describe_statement): roles, role grants, permission
// grants, service levels and their attachments.
func (a *authStore) describe(withPasswords bool) []description {
	a.mu.Lock()
	defer a.mu.Unlock()
	var roles, grants, perms, attached []description
	for name, r := range a.roles {
		roles = append(roles, description{typ: "role", name: name, stmt: roleCreateStatement(name, r, withPasswords)})
		for m := range r.memberOf {
			grants = append(grants, description{typ: "grant_role", name: m, stmt: fmt.Sprintf("GRANT %s TO %s;", maybeQuote(m), maybeQuote(name))})
		}
		for res, ps := range r.perms {
			for p := range ps {
				perms = append(perms, description{typ: "grant_permission", name: name, stmt: fmt.Sprintf("GRANT %s ON %s TO %s;", p, res, maybeQuote(name))})
			}
		}
		if r.level != "" {
			attached = append(attached, description{typ: "service_level_attachment", name: r.level,
				stmt: fmt.Sprintf("ATTACH SERVICE LEVEL %s TO %s;", maybeQuote(r.level), maybeQuote(name))})
		}
	}
	sortDescs(roles, false)
	sortDescs(grants, true)
	sortDescs(perms, true)
	sortDescs(attached, true)
	out := append(append(roles, grants...), perms...)
	out = append(out, a.describeLevels()...)
	return append(out, attached...)
}

func sortDescs(d []description, byStmt bool) {
	sort.Slice(d, func(i, j int) bool {
		if d[i].name != d[j].name || !byStmt {
			return d[i].name < d[j].name
		}
		return d[i].stmt < d[j].stmt
	})
}

// roleCreateStatement is describe_roles' statement (auth/service.cc).
func roleCreateStatement(name string, r *roleRec, withPasswords bool) string {
	role := maybeQuote(name)
	if name == defaultSuperuser {
		role = "IF NOT EXISTS " + role
	}
	with := "WITH"
	if withPasswords && r.hash != "" {
		with = "WITH HASHED PASSWORD = " + singleQuote(r.hash) + " AND"
	}
	return fmt.Sprintf("CREATE ROLE %s %s LOGIN = %t AND SUPERUSER = %t;", role, with, r.login, r.super)
}

// errBadCredentials is password_authenticator.cc's refusal; the
// connection answers it with an AUTHENTICATION_ERROR.
var errBadCredentials = fmt.Errorf("Username and/or password are incorrect")

// isSuperuser is superuser under the store's lock.
func (a *authStore) isSuperuser(user string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.superuser(user)
}

// system.roles as db/system_keyspace.cc defines it (auth v2 keeps roles in
// keyspace system).
func init() {
	defineVirtual("system", "roles", []vcol{
		{"role", "text"}, {"can_login", "boolean"}, {"is_superuser", "boolean"}, {"member_of", "set<text>"}, {"salted_hash", "text"},
	}, func(s *Server) []map[string][]byte {
		a := s.auth
		a.mu.Lock()
		defer a.mu.Unlock()
		names := make([]string, 0, len(a.roles))
		for n := range a.roles {
			names = append(names, n)
		}
		sort.Strings(names)
		var rows []map[string][]byte
		for _, n := range names {
			r := a.roles[n]
			row := map[string][]byte{"role": encText(n), "can_login": encBool(r.login), "is_superuser": encBool(r.super)}
			if len(r.memberOf) > 0 {
				var m []string
				for x := range r.memberOf {
					m = append(m, x)
				}
				sort.Strings(m)
				row["member_of"] = encTextSet(m)
			}
			if r.hash != "" {
				row["salted_hash"] = encText(r.hash)
			}
			rows = append(rows, row)
		}
		return rows
	})
}
