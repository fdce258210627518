package cqlparse

import "strings"

// RoleOptions are CREATE/ALTER ROLE's WITH options (cql3/role_options.hh).
type RoleOptions struct {
	Password, HashedPassword *string
	Login, Superuser         *bool
	Options                  map[string]string
}

// RoleStmt is CREATE, ALTER or DROP ROLE (USER: the legacy CREATE USER
// forms, which log in by default).
type RoleStmt struct {
	Op                    string // "create", "alter", "drop"
	Role                  string
	User                  bool
	IfExists, IfNotExists bool
	Opts                  RoleOptions
}

// GrantRole is GRANT role TO grantee, or REVOKE role FROM grantee.
type GrantRole struct {
	Role, Grantee string
	Revoke        bool
}

// Resource is what a permission applies to (auth/resource.hh): "data"
// (ALL KEYSPACES, KEYSPACE ks, [TABLE] ks.t), "roles" (ALL ROLES, ROLE r),
// "functions" (ALL FUNCTIONS [IN KEYSPACE ks]).
type Resource struct {
	Kind            string
	Keyspace, Table string
	Role            string
}

// GrantPermission is GRANT perm ON resource TO role (REVOKE ... FROM).
type GrantPermission struct {
	Permissions []string // upper case; ALL [PERMISSIONS] is "ALL"
	Resource    Resource
	Role        string
	Revoke      bool
}

// ListRoles is LIST ROLES [OF role] [NORECURSIVE] and LIST USERS.
type ListRoles struct {
	Of          string
	NoRecursive bool
	Users       bool
}

// ListPermissions is LIST perm|ALL [PERMISSIONS] [ON resource] [OF role] [NORECURSIVE].
type ListPermissions struct {
	Permissions []string
	Resource    *Resource
	Of          string
	NoRecursive bool
}

// ServiceLevelStmt is one of the service level statements
// (cql3/statements/*service_level*_statement.cc).
type ServiceLevelStmt struct {
	Op                    string // create, alter, drop, list, list all, attach, detach, list attached, list all attached
	Level, Role           string
	IfExists, IfNotExists bool
	Options               map[string]Term
}

func (*RoleStmt) Name() string         { return "ROLE" }
func (*GrantRole) Name() string        { return "GRANT" }
func (*GrantPermission) Name() string  { return "GRANT" }
func (*ListRoles) Name() string        { return "LIST ROLES" }
func (*ListPermissions) Name() string  { return "LIST PERMISSIONS" }
func (*ServiceLevelStmt) Name() string { return "SERVICE LEVEL" }

// roleName is Cql.g userOrRoleName: an identifier (lower-cased unless
// quoted) or a string literal.
func (p *parser) roleName() (string, error) {
	if t := p.peek(); t.kind == tString {
		p.i++
		return t.text, nil
	}
	return p.ident("role name")
}

// authStatement parses CREATE/ALTER/DROP ROLE|USER|SERVICE LEVEL after the
// verb (op) when the next keyword names one; ok is false otherwise.
func (p *parser) authStatement(op string) (st Statement, ok bool, err error) {
	switch {
	case p.isKw("role") || p.isKw("user"):
		user := p.isKw("user")
		p.i++
		p.stmt = strings.ToUpper(op) + map[bool]string{false: " ROLE", true: " USER"}[user]
		st, err := p.roleStmt(op, user)
		return st, true, err
	case p.isKw("service") && p.peekAt(1).text == "level":
		p.i += 2
		p.stmt = strings.ToUpper(op) + " SERVICE LEVEL"
		st, err := p.serviceLevelStmt(op)
		return st, true, err
	}
	return nil, false, nil
}

// conditionalName reads CREATE's [IF NOT EXISTS] or DROP's [IF EXISTS],
// then a role or service level name.
func (p *parser) conditionalName(op string) (ifNotExists, ifExists bool, name string, err error) {
	switch op {
	case "create":
		ifNotExists, err = p.ifNotExists()
	case "drop":
		ifExists, err = p.ifExists()
	}
	if err != nil {
		return false, false, "", err
	}
	name, err = p.roleName()
	return ifNotExists, ifExists, name, err
}

func (p *parser) roleStmt(op string, user bool) (Statement, error) {
	st := &RoleStmt{Op: op, User: user}
	var err error
	if st.IfNotExists, st.IfExists, st.Role, err = p.conditionalName(op); err != nil {
		return nil, err
	}
	if op == "drop" {
		return st, nil
	}
	if user {
		return st, p.userOptions(&st.Opts)
	}
	if p.acceptKw("with") {
		return st, p.roleOptions(&st.Opts)
	}
	return st, nil
}

// userOptions: [WITH [HASHED] PASSWORD 'x'] [SUPERUSER | NOSUPERUSER].
func (p *parser) userOptions(o *RoleOptions) error {
	if p.acceptKw("with") {
		hashed := p.acceptKw("hashed")
		if err := p.expectKw("password"); err != nil {
			return err
		}
		if err := p.password(o, hashed); err != nil {
			return err
		}
	}
	switch {
	case p.acceptKw("superuser"):
		o.Superuser = boolPtr(true)
	case p.acceptKw("nosuperuser"):
		o.Superuser = boolPtr(false)
	}
	return nil
}

func boolPtr(b bool) *bool { return &b }

// password reads the string of [HASHED] PASSWORD.
func (p *parser) password(o *RoleOptions, hashed bool) error {
	s, err := p.stringLit()
	if err != nil {
		return err
	}
	if hashed {
		o.HashedPassword = &s
	} else {
		o.Password = &s
	}
	return nil
}

func (p *parser) stringLit() (string, error) {
	t := p.peek()
	if t.kind != tString {
		return "", p.errf("expecting a string, got %s", t)
	}
	p.i++
	return t.text, nil
}

// roleOptions: option = value [AND ...] (Cql.g roleOptions).
func (p *parser) roleOptions(o *RoleOptions) error {
	for {
		hashed := p.acceptKw("hashed")
		name, err := p.ident("role option")
		if err != nil {
			return err
		}
		if err := p.expect("="); err != nil {
			return err
		}
		switch {
		case name == "password":
			if err := p.password(o, hashed); err != nil {
				return err
			}
		case name == "login" || name == "superuser":
			v, err := p.ident("true or false")
			if err != nil || (v != "true" && v != "false") {
				return p.errf("expecting true or false for %s", strings.ToUpper(name))
			}
			if name == "login" {
				o.Login = boolPtr(v == "true")
			} else {
				o.Superuser = boolPtr(v == "true")
			}
		case name == "options":
			t, err := p.term()
			if err != nil {
				return err
			}
			o.Options = map[string]string{}
			for i, k := range t.Keys {
				o.Options[k.Text] = t.Values[i].Text
			}
		default:
			return p.errf("no viable alternative at input '%s'", name)
		}
		if !p.acceptKw("and") {
			return nil
		}
	}
}

func (p *parser) serviceLevelStmt(op string) (Statement, error) {
	st := &ServiceLevelStmt{Op: op, Options: map[string]Term{}}
	var err error
	if st.IfNotExists, st.IfExists, st.Level, err = p.conditionalName(op); err != nil {
		return nil, err
	}
	if op != "drop" && p.acceptKw("with") {
		if err := p.options(st.Options, "service level option"); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// grantStatement parses GRANT/REVOKE after the verb: a role grant or a
// permission grant.
func (p *parser) grantStatement(revoke bool) (Statement, error) {
	to := map[bool]string{false: "to", true: "from"}[revoke]
	if p.isPermission() {
		perms, err := p.permissions()
		if err != nil {
			return nil, err
		}
		if err := p.expectKw("on"); err != nil {
			return nil, err
		}
		res, err := p.resource()
		if err != nil {
			return nil, err
		}
		if err := p.expectKw(to); err != nil {
			return nil, err
		}
		role, err := p.roleName()
		return &GrantPermission{Permissions: perms, Resource: res, Role: role, Revoke: revoke}, err
	}
	role, err := p.roleName()
	if err != nil {
		return nil, err
	}
	if err := p.expectKw(to); err != nil {
		return nil, err
	}
	grantee, err := p.roleName()
	return &GrantRole{Role: role, Grantee: grantee, Revoke: revoke}, err
}

var permissionNames = map[string]bool{"create": true, "alter": true, "drop": true, "select": true, "modify": true,
	"authorize": true, "describe": true, "execute": true, "all": true}

func (p *parser) isPermission() bool {
	t := p.peek()
	return t.kind == tIdent && permissionNames[t.text] && (p.peekAt(1).text == "on" || p.peekAt(1).text == "permissions" || p.peekAt(1).text == "permission")
}

func (p *parser) permissions() ([]string, error) {
	name, err := p.ident("permission")
	if err != nil {
		return nil, err
	}
	if !p.acceptKw("permissions") {
		p.acceptKw("permission")
	}
	return []string{strings.ToUpper(name)}, nil
}

// resource is Cql.g resource: data, role and function resources.
func (p *parser) resource() (Resource, error) {
	switch {
	case p.acceptKw("all"):
		switch {
		case p.acceptKw("keyspaces"):
			return Resource{Kind: "data"}, nil
		case p.acceptKw("roles"):
			return Resource{Kind: "roles"}, nil
		case p.acceptKw("functions"):
			r := Resource{Kind: "functions"}
			if p.acceptKw("in") {
				if err := p.expectKw("keyspace"); err != nil {
					return r, err
				}
				ks, err := p.ident("keyspace name")
				r.Keyspace = ks
				return r, err
			}
			return r, nil
		}
		return Resource{}, p.errf("expecting KEYSPACES, ROLES or FUNCTIONS, got %s", p.peek())
	case p.acceptKw("keyspace"):
		ks, err := p.ident("keyspace name")
		return Resource{Kind: "data", Keyspace: ks}, err
	case p.acceptKw("role"):
		r, err := p.roleName()
		return Resource{Kind: "roles", Role: r}, err
	}
	p.acceptKw("table")
	ks, t, err := p.qualifiedName("table name")
	return Resource{Kind: "data", Keyspace: ks, Table: t}, err
}

// listStatement parses LIST ... after LIST.
func (p *parser) listStatement() (Statement, error) {
	switch {
	case p.acceptKw("roles"):
		p.stmt = "LIST ROLES"
		st := &ListRoles{}
		return st, p.ofRole(&st.Of, &st.NoRecursive)
	case p.acceptKw("users"):
		p.stmt = "LIST USERS"
		return &ListRoles{Users: true}, nil
	case p.isKw("service") && p.peekAt(1).text == "level":
		p.i += 2
		p.stmt = "LIST SERVICE LEVEL"
		name, err := p.roleName()
		return &ServiceLevelStmt{Op: "list", Level: name}, err
	case p.isKw("attached"):
		p.i++
		p.stmt = "LIST ATTACHED SERVICE LEVEL"
		if err := p.serviceLevelKw(); err != nil {
			return nil, err
		}
		if err := p.expectKw("of"); err != nil {
			return nil, err
		}
		role, err := p.roleName()
		return &ServiceLevelStmt{Op: "list attached", Role: role}, err
	case p.isKw("all") && p.peekAt(1).text == "service":
		p.i += 2
		p.stmt = "LIST ALL SERVICE LEVELS"
		if !p.acceptKw("levels") {
			return nil, p.errf("expecting LEVELS, got %s", p.peek())
		}
		return &ServiceLevelStmt{Op: "list all"}, nil
	case p.isKw("all") && p.peekAt(1).text == "attached":
		p.i += 2
		p.stmt = "LIST ALL ATTACHED SERVICE LEVELS"
		if err := p.expectKw("service"); err != nil {
			return nil, err
		}
		if err := p.expectKw("levels"); err != nil {
			return nil, err
		}
		return &ServiceLevelStmt{Op: "list all attached"}, nil
	}
	p.stmt = "LIST PERMISSIONS"
	perms, err := p.permissions()
	if err != nil {
		return nil, err
	}
	st := &ListPermissions{Permissions: perms}
	if p.acceptKw("on") {
		r, err := p.resource()
		if err != nil {
			return nil, err
		}
		st.Resource = &r
	}
	return st, p.ofRole(&st.Of, &st.NoRecursive)
}

func (p *parser) serviceLevelKw() error {
	if err := p.expectKw("service"); err != nil {
		return err
	}
	return p.expectKw("level")
}

func (p *parser) ofRole(of *string, norec *bool) error {
	if p.acceptKw("of") {
		r, err := p.roleName()
		if err != nil {
			return err
		}
		*of = r
	}
	*norec = p.acceptKw("norecursive")
	return nil
}

// attachStatement parses ATTACH SERVICE LEVEL sl TO role and DETACH
// SERVICE LEVEL FROM role after the verb.
func (p *parser) attachStatement(detach bool) (Statement, error) {
	if err := p.serviceLevelKw(); err != nil {
		return nil, err
	}
	if detach {
		if err := p.expectKw("from"); err != nil {
			return nil, err
		}
		role, err := p.roleName()
		return &ServiceLevelStmt{Op: "detach", Role: role}, err
	}
	sl, err := p.roleName()
	if err != nil {
		return nil, err
	}
	if err := p.expectKw("to"); err != nil {
		return nil, err
	}
	role, err := p.roleName()
	return &ServiceLevelStmt{Op: "attach", Level: sl, Role: role}, err
}
