package scenarios

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestReadmeDocumentsEveryKey keeps the README's scenario reference complete:
// every YAML key of the scenario types must appear there as `key`.
func TestReadmeDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	var missing []string
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Slice || typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		fields, names := fieldsOf(typ)
		for _, n := range names {
			if !strings.Contains(readme, "`"+n+"`") && !strings.Contains(readme, "`"+n+".") && !strings.Contains(readme, "."+n+"`") {
				missing = append(missing, join(path, n))
			}
			walk(typ.Field(fields[n]).Type, join(path, n))
		}
	}
	walk(reflect.TypeFor[Scenario](), "")
	for _, body := range []any{Grow{}, Shrink{}, Drain{}, Hold{}, Hook{}} {
		walk(reflect.TypeOf(body), "nemesis.*")
	}
	for _, k := range stepKinds {
		if !strings.Contains(readme, "`"+k+"`") {
			missing = append(missing, "nemesis kind "+k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("README.md does not document: %s", strings.Join(missing, ", "))
	}
}
