package cql

import "testing"

// user_function.cc describe prints types with cql3_type_name_without_frozen.
func TestWithoutFrozen(t *testing.T) {
	for in, want := range map[string]string{
		"frozen<tuple<uuid, inet>>":         "tuple<uuid, inet>",
		"list<frozen<map<int, text>>>":      "list<map<int, text>>",
		"frozen<list<frozen<set<ks.typ>>>>": "list<set<ks.typ>>",
		"int":                               "int",
	} {
		if got := withoutFrozen(in); got != want {
			t.Errorf("withoutFrozen(%q) = %q, want %q", in, got, want)
		}
	}
}
