package reporting

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/results"
)

// token is one tag of an HTML document, read by a small tokenizer (no
// golang.org/x/net/html in the module graph): enough to check structure.
type token struct {
	name  string // lower-case tag name, "/name" for an end tag
	attrs map[string]string
}

func tokenize(t *testing.T, doc string) (tags []token, text string) {
	t.Helper()
	var sb strings.Builder
	for i := 0; i < len(doc); {
		if doc[i] != '<' {
			j := strings.IndexByte(doc[i:], '<')
			if j < 0 {
				j = len(doc) - i
			}
			sb.WriteString(doc[i : i+j])
			i += j
			continue
		}
		if strings.HasPrefix(doc[i:], "<!--") {
			end := strings.Index(doc[i:], "-->")
			if end < 0 {
				t.Fatal("unterminated comment")
			}
			i += end + 3
			continue
		}
		// Find the end of the tag, honouring quoted attribute values.
		j, quote := i+1, byte(0)
		for ; j < len(doc); j++ {
			c := doc[j]
			if quote != 0 {
				if c == quote {
					quote = 0
				}
				continue
			}
			if c == '"' || c == '\'' {
				quote = c
			} else if c == '>' {
				break
			} else if c == '<' {
				t.Fatalf("'<' inside a tag at offset %d: %q", j, doc[i:min(j+20, len(doc))])
			}
		}
		if j == len(doc) {
			t.Fatalf("unterminated tag at offset %d", i)
		}
		tags = append(tags, parseTag(doc[i+1:j]))
		i = j + 1
	}
	return tags, sb.String()
}

func parseTag(s string) token {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/")
	name, rest, _ := strings.Cut(s, " ")
	tk := token{name: strings.ToLower(name), attrs: map[string]string{}}
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
		k, v := rest, ""
		if eq := strings.IndexAny(rest, "= "); eq >= 0 && rest[eq] == '=' {
			k = rest[:eq]
			rest = rest[eq+1:]
			if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
				end := strings.IndexByte(rest[1:], rest[0])
				v, rest = rest[1:1+end], rest[end+2:]
			} else {
				end := strings.IndexByte(rest, ' ')
				if end < 0 {
					end = len(rest)
				}
				v, rest = rest[:end], rest[end:]
			}
		} else {
			end := strings.IndexByte(rest, ' ')
			if end < 0 {
				end = len(rest)
			}
			k, rest = rest[:end], rest[end:]
		}
		tk.attrs[strings.ToLower(k)] = v
	}
	return tk
}

func TestHTMLReport(t *testing.T) {
	dir := copyRun(t, filepath.Join("testdata", "run1"))
	if _, err := Render(dir, Options{Formats: []string{FormatHTML}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, results.FileReportHTML))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	tags, text := tokenize(t, doc)

	ids := map[string]bool{}
	open := map[string]int{}
	failedWithTitle, svgs := 0, 0
	var links []string
	for _, tk := range tags {
		switch {
		case tk.name == "script" || tk.name == "iframe" || tk.name == "link" || tk.name == "img":
			t.Errorf("unexpected <%s> in a self-contained report", tk.name)
		case tk.name == "table" || tk.name == "tr" || tk.name == "td" || tk.name == "svg":
			open[tk.name]++
		case strings.HasPrefix(tk.name, "/"):
			open[tk.name[1:]]--
		}
		if tk.name == "table" || tk.name == "h3" {
			ids[tk.attrs["id"]] = true
		}
		if tk.name == "a" {
			links = append(links, tk.attrs["href"])
		}
		if tk.name == "svg" {
			svgs++
		}
		if tk.name == "td" && slices.Contains(strings.Fields(tk.attrs["class"]), CellFailed) && tk.attrs["title"] != "" {
			failedWithTitle++
		}
		for _, a := range []string{"src", "href", "xlink:href", "action"} {
			if v, ok := tk.attrs[a]; ok && !(tk.name == "a" && a == "href" && strings.HasPrefix(v, "#")) { // in-page links only
				t.Errorf("<%s %s=%q>: the report must not reference anything", tk.name, a, v)
			}
		}
	}
	for _, name := range []string{"table", "tr", "td", "svg"} {
		if open[name] != 0 {
			t.Errorf("<%s> not balanced (%+d)", name, open[name])
		}
	}
	for _, id := range []string{"steady", "steady-stalls", "step-1", "step-1-stalls", "stalls", "disk", "durations", "steps", "errors", "thresholds"} {
		if !ids["t-"+id] {
			t.Errorf("table %s missing", id)
		}
	}
	// latency, throughput, disk, stalls; tablets, reactor utilization,
	// migrations, coordinator timeouts; per cycle (4) latency, throughput, tablets.
	if svgs != 8+4*3 {
		t.Errorf("%d charts, want 20", svgs)
	}
	for _, title := range []string{"Tablets per node", "Reactor utilization per node", "Tablet migrations", "Coordinator timeouts"} {
		if !strings.Contains(doc, `aria-label="`+title) {
			t.Errorf("no chart %q", title)
		}
	}
	// Every latency row links to its cycle's zoomed charts.
	for _, c := range []string{"cycle-0", "cycle-1", "cycle-2", "cycle-3"} {
		if !ids[c] || !slices.Contains(links, "#"+c) {
			t.Errorf("cycle section %s: id %v, linked %v", c, ids[c], slices.Contains(links, "#"+c))
		}
	}
	if failedWithTitle == 0 {
		t.Error("no failed cell with its threshold in a title")
	}
	if strings.Contains(doc, "http://") || strings.Contains(doc, "https://") {
		t.Error("the report contains a URL")
	}
	if strings.Contains(doc, "<script>alert(1)") {
		t.Error("the <script> line of a database error is not escaped")
	}
	if !strings.Contains(doc, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(text, "&lt;script&gt;") {
		t.Error("the escaped database error line is missing")
	}
}
