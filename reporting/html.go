package reporting

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// The HTML report is one file with no external reference: inline CSS,
// inline SVG, no script. html/template escapes every text that came from
// logs or scenarios.

const css = `
body{font:14px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px auto;max-width:1220px;color:#1b1f23;padding:0 12px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #e1e4e8;padding-bottom:4px}
.status{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:600;color:#fff}
.status.passed{background:#2da44e}.status.failed,.status.error{background:#cf222e}.status.interrupted,.status.running{background:#9a6700}
.setup{background:#f6f8fa;border:1px solid #e1e4e8;border-radius:6px;padding:8px 12px;margin:10px 0}
.emulated{border-left:4px solid #9a6700;background:#fff8c5;padding:6px 12px;margin:8px 0}
table{border-collapse:collapse;margin:6px 0 4px;font-variant-numeric:tabular-nums}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
td.passed{background:#dafbe1;color:#116329}td.failed{background:#ffebe9;color:#a40e26;font-weight:600}td.warning{background:#fff8c5;color:#7d4e00}
td.num{text-align:right}td.line{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;max-width:620px;word-break:break-all}
.note{color:#57606a;font-size:13px;margin:4px 0}
svg.chart{display:block;margin:8px 0 14px;max-width:100%;height:auto;background:#fff}
svg .ct{font-size:14px;font-weight:600;fill:#1b1f23}svg .sl{font-size:10px;fill:#57606a}
svg .yt{font-size:11px;text-anchor:end;fill:#57606a}svg .xt{font-size:11px;text-anchor:middle;fill:#57606a}
svg .yl{font-size:11px;text-anchor:middle;fill:#57606a}svg .lg{font-size:12px;fill:#1b1f23}
svg .grid{stroke:#000;stroke-opacity:.08}svg .axis{stroke:#57606a}svg .frame{fill:none;stroke:#8c959f}
.legend span{display:inline-block;padding:0 8px;margin-right:6px;font-size:12px}
`

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>elasticity report: {{.Title}}</title><style>{{.CSS}}</style></head>
<body>
<h1>elasticity report: {{.Title}}</h1>
<p><span class="status {{.Status}}">{{.StatusUpper}}</span>{{if .Reason}} {{.Reason}}{{end}}</p>
<div class="setup"><b>Setup:</b> {{.Setup}}</div>
{{if .Emulated}}<div class="emulated">{{.EmulatedNote}}</div>{{end}}
{{if .Description}}<p>{{.Description}}</p>{{end}}
<p class="note">{{.RunLine}}</p>
{{if .Answers}}<h2>Answers</h2><ul>{{range .Answers}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Charts</h2>
<p class="legend note">Shading: <span style="background:#f3e3c3">fill</span><span style="background:#ececec">hold</span><span style="background:#d9eed5">steady state (Cycle #0)</span><span style="background:#d8e6f3">scale-out cycles</span><span style="background:#e6ddf2">(alternating)</span></p>
{{range .Charts}}{{.}}
{{end}}
{{if .Cycles}}<h2 id="cycles">Cycles</h2><p class="note">Each cycle's charts, zoomed to it (the latency tables' Overview links point here).</p>
{{range .Cycles}}<h3 id="{{.ID}}">{{.Title}}</h3>
{{range .Charts}}{{.}}
{{end}}{{end}}{{end}}
{{range .Tables}}<h2 id="{{.ID}}">{{.Name}}</h2>
{{if .Rows}}<table id="t-{{.ID}}"><thead><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}{{if .Threshold}} title="{{.Threshold}}"{{end}}>{{if .Link}}<a href="{{.Link}}">{{.Value}}</a>{{else}}{{.Value}}{{end}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
{{end}}
<h2>Limitations</h2><ul>{{range .Limitations}}<li>{{.}}</li>{{end}}</ul>
</body></html>
`))

type htmlCell struct {
	Value, Class, Threshold string
	Link                    string // html/template sanitizes it
}

type htmlTable struct {
	ID, Name, Note string
	Columns        []string
	Rows           [][]htmlCell
}

type htmlPage struct {
	Title, Status, StatusUpper, Reason, Setup, Description, RunLine, EmulatedNote string
	Emulated                                                                      bool
	CSS                                                                           template.CSS
	Answers, Limitations                                                          []string
	Charts                                                                        []template.HTML
	Cycles                                                                        []cycleSection
	Tables                                                                        []htmlTable
}

// HTML writes the self-contained HTML report of an analysis; Evaluate must
// have been applied to a.Result.
func HTML(w io.Writer, a *analysis) error {
	res := a.Result
	s := &res.Setup
	p := htmlPage{
		Title: orDash(s.Scenario), Status: res.Status, StatusUpper: strings.ToUpper(res.Status), Reason: res.Reason,
		Setup: SetupLine(res), Description: s.Description, Emulated: s.Emulated, EmulatedNote: EmulatedNote, CSS: template.CSS(css),
		RunLine: fmt.Sprintf("Run %s on backend %s, %s → %s UTC (%s).", orDash(s.RunID), orDash(s.Backend),
			res.StartedAt.UTC().Format("2006-01-02 15:04:05"), res.EndedAt.UTC().Format("2006-01-02 15:04:05"), HMS(res.EndedAt.Sub(res.StartedAt).Seconds())),
		Answers: Answers(res), Limitations: Limitations(res), Charts: charts(a), Cycles: cycleSections(a),
	}
	for _, t := range buildTables(res) {
		ht := htmlTable{ID: t.ID, Name: t.Name, Note: t.Note, Columns: t.Columns}
		for _, r := range t.Rows {
			row := make([]htmlCell, len(r))
			for i, c := range r {
				row[i] = htmlCell{Value: c.Value, Class: c.Status, Threshold: c.Threshold}
				switch {
				case c.URL != "":
					row[i].Link = c.URL
				case c.Anchor != "" && a.Timeline != nil:
					row[i].Link = "#" + c.Anchor // an in-page fragment
				}
				if i > 0 && numeric(c.Value) {
					row[i].Class = strings.TrimSpace(row[i].Class + " num")
				}
				if t.ID == "errors" && i == len(r)-1 {
					row[i].Class = "line"
				}
			}
			ht.Rows = append(ht.Rows, row)
		}
		p.Tables = append(p.Tables, ht)
	}
	if err := page.Execute(w, p); err != nil {
		return fmt.Errorf("rendering the HTML report: %w", err)
	}
	return nil
}

// numeric reports whether a cell holds a number, a duration or a time (right-aligned).
func numeric(v string) bool {
	if v == "" {
		return false
	}
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c == '.' || c == ',' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}
