package cql

import (
	"sort"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// user is the connection's logged-in role ("" = anonymous: no
// PasswordAuthenticator, or an internal caller).
func (ec *execCtx) user() string {
	if ec.c == nil {
		return ""
	}
	return ec.c.getUser()
}

// ensureNotAnonymous is client_state::ensure_not_anonymous: with
// AllowAllAuthenticator every client is anonymous, so ScyllaDB refuses all
// role and permission statements.
func (ec *execCtx) ensureNotAnonymous() error {
	if ec.user() == "" {
		return engine.Errorf(engine.CodeUnauthorized, "You have to be logged in and not anonymous to perform this request")
	}
	return nil
}

// lockedAuth is the auth store, locked, for a client that is not
// anonymous (every role and permission statement's first check).
func (ec *execCtx) lockedAuth() (*authStore, func(), error) {
	if err := ec.ensureNotAnonymous(); err != nil {
		return nil, nil, err
	}
	a := ec.s.auth
	a.mu.Lock()
	return a, a.mu.Unlock, nil
}

// ensureSuperuser refuses what only superusers may do; a role's own
// permissions on the roles resource are not consulted (the emulator
// checks superuser status only).
func (a *authStore) ensureSuperuser(user, what string) error {
	if !a.superuser(user) {
		return engine.Errorf(engine.CodeUnauthorized, "%s", what)
	}
	return nil
}

// roleStmt runs CREATE/ALTER/DROP ROLE|USER
// (cql3/statements/role-management-statements.cc, create_user_statement.cc).
func (ec *execCtx) roleStmt(x *cqlparse.RoleStmt) (message.Message, error) {
	a, unlock, err := ec.lockedAuth()
	if err != nil {
		return nil, err
	}
	defer unlock()
	user := ec.user()
	o := x.Opts
	if o.Password != nil && o.HashedPassword != nil {
		return nil, engine.Errorf(engine.CodeSyntaxError, "Only one of the options: PASSWORD, HASHED PASSWORD can be provided")
	}
	switch x.Op {
	case "create":
		if err := a.ensureSuperuser(user, "User "+user+" has no CREATE permission on <all roles> or any of its parents"); err != nil {
			return nil, err
		}
		if a.roles[x.Role] != nil {
			if x.IfNotExists {
				return nil, nil
			}
			return nil, engine.Errorf(engine.CodeInvalid, "Role %s already exists.", x.Role)
		}
		r := &roleRec{login: x.User, memberOf: map[string]bool{}, perms: map[string]map[string]bool{}}
		a.roles[x.Role] = r
		applyRoleOptions(r, o)
	case "alter":
		r, err := a.role(x.Role)
		if err != nil {
			return nil, err
		}
		if err := a.ensureSuperuser(user, "User "+user+" has no ALTER permission on <role "+x.Role+"> or any of its parents"); err != nil && x.Role != user {
			return nil, err
		}
		applyRoleOptions(r, o)
	case "drop":
		if x.Role == user {
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot DROP primary role for current login.")
		}
		if err := a.ensureSuperuser(user, "User "+user+" has no DROP permission on <role "+x.Role+"> or any of its parents"); err != nil {
			return nil, err
		}
		if a.roles[x.Role] == nil {
			if x.IfExists {
				return nil, nil
			}
			return nil, engine.Errorf(engine.CodeInvalid, "Role %s doesn't exist.", x.Role)
		}
		delete(a.roles, x.Role)
		for _, r := range a.roles {
			delete(r.memberOf, x.Role)
			delete(r.perms, "ROLE "+maybeQuote(x.Role))
		}
	}
	return nil, nil
}

func applyRoleOptions(r *roleRec, o cqlparse.RoleOptions) {
	if o.Login != nil {
		r.login = *o.Login
	}
	if o.Superuser != nil {
		r.super = *o.Superuser
	}
	if o.Password != nil {
		r.hash = hashPassword(*o.Password)
	}
	if o.HashedPassword != nil {
		r.hash = *o.HashedPassword
	}
}

// grantRole runs GRANT role TO grantee / REVOKE role FROM grantee
// (standard_role_manager.cc grant/revoke).
func (ec *execCtx) grantRole(x *cqlparse.GrantRole) (message.Message, error) {
	a, unlock, err := ec.lockedAuth()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := a.ensureSuperuser(ec.user(), "User "+ec.user()+" has no AUTHORIZE permission on <role "+x.Role+"> or any of its parents"); err != nil {
		return nil, err
	}
	grantee, err := a.role(x.Grantee)
	if err != nil {
		return nil, err
	}
	if _, err := a.role(x.Role); err != nil {
		return nil, err
	}
	switch {
	case x.Revoke && !grantee.memberOf[x.Role]:
		return nil, engine.Errorf(engine.CodeInvalid, "%s was not granted role %s, so it cannot be revoked.", x.Grantee, x.Role)
	case x.Revoke:
		delete(grantee.memberOf, x.Role)
	case grantee.memberOf[x.Role]:
		return nil, engine.Errorf(engine.CodeInvalid, "%s already includes role %s.", x.Grantee, x.Role)
	case a.granted(x.Role, true)[x.Grantee]:
		return nil, engine.Errorf(engine.CodeInvalid, "%s already includes role %s.", x.Role, x.Grantee)
	default:
		grantee.memberOf[x.Role] = true
	}
	return nil, nil
}

// applicablePermissions are auth/resource.cc applicable_permissions: what
// ALL expands to on each kind of resource.
func applicablePermissions(r cqlparse.Resource) []string {
	switch {
	case r.Kind == "data" && r.Keyspace == "":
		return []string{"CREATE", "ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE", "DESCRIBE"}
	case r.Kind == "data":
		return []string{"CREATE", "ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE"}
	case r.Kind == "roles" && r.Role == "":
		return []string{"CREATE", "ALTER", "DROP", "AUTHORIZE", "DESCRIBE"}
	case r.Kind == "roles":
		return []string{"ALTER", "DROP", "AUTHORIZE"}
	case r.Keyspace == "":
		return []string{"CREATE", "ALTER", "DROP", "AUTHORIZE", "EXECUTE"}
	}
	return []string{"CREATE", "ALTER", "DROP", "AUTHORIZE", "EXECUTE"}
}

// resourceText is how describe_resource_kind (auth/service.cc) names a
// resource after ON.
func resourceText(r cqlparse.Resource, session string) string {
	switch r.Kind {
	case "roles":
		if r.Role == "" {
			return "ALL ROLES"
		}
		return "ROLE " + maybeQuote(r.Role)
	case "functions":
		if r.Keyspace == "" {
			return "ALL FUNCTIONS"
		}
		return "ALL FUNCTIONS IN KEYSPACE " + maybeQuote(r.Keyspace)
	}
	switch {
	case r.Keyspace == "" && r.Table == "":
		return "ALL KEYSPACES"
	case r.Table == "":
		return "KEYSPACE " + maybeQuote(r.Keyspace)
	}
	return maybeQuote(orDefault(r.Keyspace, session)) + "." + maybeQuote(r.Table)
}

// grantPermission runs GRANT/REVOKE permission (grant_statement.cc,
// revoke_statement.cc, default_authorizer.cc).
func (ec *execCtx) grantPermission(x *cqlparse.GrantPermission) (message.Message, error) {
	a, unlock, err := ec.lockedAuth()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := a.ensureSuperuser(ec.user(), "User "+ec.user()+" has no AUTHORIZE permission on <"+strings.ToLower(resourceText(x.Resource, ec.keyspace))+"> or any of its parents"); err != nil {
		return nil, err
	}
	if err := ec.checkResource(x.Resource); err != nil {
		return nil, err
	}
	r, err := a.role(x.Role)
	if err != nil {
		return nil, err
	}
	perms := x.Permissions
	if perms[0] == "ALL" {
		perms = applicablePermissions(x.Resource)
	}
	res := resourceText(x.Resource, ec.keyspace)
	for _, p := range perms {
		if x.Revoke {
			delete(r.perms[res], p)
			continue
		}
		if r.perms[res] == nil {
			r.perms[res] = map[string]bool{}
		}
		r.perms[res][p] = true
	}
	return nil, nil
}

// checkResource refuses grants on missing keyspaces, tables and roles
// (permission_altering_statement.cc validate).
func (ec *execCtx) checkResource(r cqlparse.Resource) error {
	sch := schemaOf(ec.s)
	switch {
	case r.Kind == "roles" && r.Role != "":
		_, err := ec.s.auth.role(r.Role)
		return err
	case r.Kind != "data" || r.Keyspace == "" && r.Table == "":
		return nil
	case sch.Keyspaces[orDefault(r.Keyspace, ec.keyspace)] == nil:
		return engine.Errorf(engine.CodeInvalid, "Resource <keyspace %s> doesn't exist", orDefault(r.Keyspace, ec.keyspace))
	case r.Table != "" && sch.Tables[orDefault(r.Keyspace, ec.keyspace)][r.Table] == nil:
		return engine.Errorf(engine.CodeInvalid, "Resource <table %s.%s> doesn't exist", orDefault(r.Keyspace, ec.keyspace), r.Table)
	}
	return nil
}

// listRoles is LIST ROLES [OF role] [NORECURSIVE] and LIST USERS
// (list_roles_statement, list_users_statement.cc).
func (ec *execCtx) listRoles(x *cqlparse.ListRoles) (message.Message, error) {
	a, unlock, err := ec.lockedAuth()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var names []string
	switch {
	case x.Of != "":
		if _, err := a.role(x.Of); err != nil {
			return nil, err
		}
		for n := range a.granted(x.Of, !x.NoRecursive) {
			names = append(names, n)
		}
	case a.superuser(ec.user()):
		for n := range a.roles {
			names = append(names, n)
		}
	default:
		for n := range a.granted(ec.user(), true) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if x.Users {
		return a.listUsers(names), nil
	}
	col := func(name string, t datatype.DataType) *message.ColumnMetadata {
		return &message.ColumnMetadata{Keyspace: "system", Table: "roles", Name: name, Type: t}
	}
	cols := []*message.ColumnMetadata{col("role", datatype.Varchar), col("super", datatype.Boolean), col("login", datatype.Boolean),
		col("options", datatype.NewMap(datatype.Varchar, datatype.Varchar))}
	res := &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: 4, Columns: cols}}
	for _, n := range names {
		r := a.roles[n]
		res.Data = append(res.Data, message.Row{[]byte(n), encBool(r.super), encBool(r.login), encTextMap(nil)})
	}
	return res, nil
}

// listUsers is list_users_statement.cc: the roles that can log in.
func (a *authStore) listUsers(names []string) message.Message {
	col := func(name string, t datatype.DataType) *message.ColumnMetadata {
		return &message.ColumnMetadata{Keyspace: "system_auth", Table: "users", Name: name, Type: t}
	}
	cols := []*message.ColumnMetadata{col("name", datatype.Varchar), col("super", datatype.Boolean)}
	res := &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: 2, Columns: cols}}
	for _, n := range names {
		if r := a.roles[n]; r.login {
			res.Data = append(res.Data, message.Row{[]byte(n), encBool(r.super)})
		}
	}
	return res
}

// listPermissions is LIST ... PERMISSIONS (list_permissions_statement.cc):
// role, username, resource, permission.
func (ec *execCtx) listPermissions(x *cqlparse.ListPermissions) (message.Message, error) {
	a, unlock, err := ec.lockedAuth()
	if err != nil {
		return nil, err
	}
	defer unlock()
	col := func(name string) *message.ColumnMetadata {
		return &message.ColumnMetadata{Keyspace: "system_auth", Table: "permissions", Name: name, Type: datatype.Varchar}
	}
	res := &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: 4, Columns: []*message.ColumnMetadata{col("role"), col("username"), col("resource"), col("permission")}}}
	roles := map[string]bool{}
	if x.Of != "" {
		if _, err := a.role(x.Of); err != nil {
			return nil, err
		}
		roles = a.granted(x.Of, !x.NoRecursive)
	} else {
		for n := range a.roles {
			roles[n] = true
		}
	}
	var rows []message.Row
	for n := range roles {
		for res, ps := range a.roles[n].perms {
			if x.Resource != nil && res != resourceText(*x.Resource, ec.keyspace) {
				continue
			}
			for p := range ps {
				if x.Permissions[0] == "ALL" || x.Permissions[0] == p {
					rows = append(rows, message.Row{[]byte(n), []byte(n), []byte("<" + strings.ToLower(res) + ">"), []byte(p)})
				}
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		return string(rows[i][0])+string(rows[i][2])+string(rows[i][3]) < string(rows[j][0])+string(rows[j][2])+string(rows[j][3])
	})
	res.Data = rows
	return res, nil
}
