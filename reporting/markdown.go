package reporting

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/elasticity-dev/elasticity/results"
)

// MarkdownOptions tune the markdown report.
type MarkdownOptions struct {
	// Plain writes values without GitHub's $${\color{..}}$$ colouring;
	// failed values are marked "(FAIL)" instead.
	Plain bool
}

// Markdown writes the markdown report of res.
func Markdown(w io.Writer, res *results.Result, opt MarkdownOptions) error {
	var b bytes.Buffer
	s := &res.Setup
	title := s.Scenario
	if title == "" {
		title = "run"
	}
	fmt.Fprintf(&b, "# elasticity report: %s\n\n", mdText(title))
	fmt.Fprintf(&b, "**Status: %s**", strings.ToUpper(res.Status))
	if res.Reason != "" {
		fmt.Fprintf(&b, " — %s", mdText(res.Reason))
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "**Setup:** %s\n\n", mdText(SetupLine(res)))
	if s.Emulated {
		fmt.Fprintf(&b, "> %s\n\n", EmulatedNote)
	}
	if s.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", mdText(s.Description))
	}
	fmt.Fprintf(&b, "Run %s on backend %s, %s → %s UTC (%s).\n\n", mdText(orDash(s.RunID)), mdText(orDash(s.Backend)),
		res.StartedAt.UTC().Format("2006-01-02 15:04:05"), res.EndedAt.UTC().Format("2006-01-02 15:04:05"), HMS(res.EndedAt.Sub(res.StartedAt).Seconds()))

	if ans := Answers(res); len(ans) > 0 {
		b.WriteString("## Answers\n\n")
		for _, a := range ans {
			fmt.Fprintf(&b, "- %s\n", mdText(a))
		}
		b.WriteString("\n")
	}
	for _, t := range buildTables(res) {
		fmt.Fprintf(&b, "## %s\n\n", mdText(t.Name))
		if len(t.Rows) > 0 {
			if err := mdTable(&b, t, opt); err != nil {
				return fmt.Errorf("rendering table %s: %w", t.Name, err)
			}
			b.WriteString("\n")
		}
		if t.Note != "" {
			fmt.Fprintf(&b, "%s\n\n", mdText(t.Note))
		}
	}
	b.WriteString("## Limitations\n\n")
	for _, l := range Limitations(res) {
		fmt.Fprintf(&b, "- %s\n", mdText(l))
	}
	_, err := w.Write(b.Bytes())
	return err
}

func mdTable(w io.Writer, t Table, opt MarkdownOptions) error {
	tbl := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithTrimSpace(tw.Off),
	)
	head := make([]any, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = mdCell(c)
	}
	tbl.Header(head...)
	for _, r := range t.Rows {
		row := make([]string, len(r))
		for i, c := range r {
			row[i] = colour(c, opt)
			switch {
			case c.URL != "":
				row[i] = "[" + row[i] + "](" + strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "|", "%7C").Replace(c.URL) + ")"
			case c.Anchor != "":
				row[i] = "[" + row[i] + "](" + results.FileReportHTML + "#" + c.Anchor + ")"
			}
		}
		if err := tbl.Append(row); err != nil {
			return err
		}
	}
	return tbl.Render()
}

// colour renders a value the GitHub way: $${\color{green}1.12}$$.
func colour(c Cell, opt MarkdownOptions) string {
	v := mdCell(c.Value)
	switch {
	case c.Status == "":
		return v
	case opt.Plain && c.Status == CellFailed:
		return v + " (FAIL)"
	case opt.Plain:
		return v
	}
	col := "green"
	switch c.Status {
	case CellFailed:
		col = "red"
	case CellWarning:
		col = "orange"
	}
	// Inside LaTeX only plain values are safe; they are numbers, times or words here.
	return "$${\\color{" + col + "}" + strings.NewReplacer("\\", "", "{", "", "}", "", "$", "").Replace(v) + "}$$"
}

// mdCell makes a value safe inside a table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "\r", " ", "\n", " ").Replace(mdText(s))
}

// mdText neutralises HTML in text that came from logs or scenarios: GitHub
// renders raw HTML in markdown.
func mdText(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}
