package scenarios

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/csstress" // a user line's profile is read where the scenario is
	_ "github.com/elasticity-dev/elasticity/stress/models" // the forms ParseModel knows
)

// MaxProfileSize bounds a user profile: it travels inside the model's spec
// on a loader's command line (stress.MaxModelSpec, base64 of it).
const MaxProfileSize = 64 << 10

// The workload forms' fields (at most one of them).
const (
	fieldStressCmd = "workload.stress_cmd"
	fieldProfile   = "workload.profile"
	fieldKind      = "workload.kind"
)

// Form names the workload's field that chose its model ("" for the
// built-in key/value model).
func (w Workload) Form() string {
	switch {
	case w.StressCmd != "":
		return fieldStressCmd
	case w.Profile != "":
		return fieldProfile
	case w.Kind != "":
		return fieldKind
	}
	return ""
}

// ModelSpec is the spec (stress.Model.Spec) of the workload's model:
// stress.KVSpec for the built-in model, else the form's spec built from the
// fields (stress.CSSpec, ProfileSpec, SBSpec). A profile's content is the
// file read when the scenario loaded.
func (w Workload) ModelSpec() string {
	switch w.Form() {
	case fieldStressCmd:
		if u := w.user; u != nil {
			return stress.ProfileSpecWith(filepath.Base(u.Profile), w.profileYAML, u.Ops, userOptions(u))
		}
		return stress.CSSpec(strings.TrimSpace(w.StressCmd))
	case fieldProfile:
		return stress.ProfileSpec(filepath.Base(w.Profile), w.profileYAML, w.Ops)
	case fieldKind:
		opts := []string{"mode=" + w.Kind}
		if w.PartitionCount > 0 {
			opts = append(opts, "partition-count="+strconv.Itoa(w.PartitionCount))
		}
		if w.ClusteringRowCount > 0 {
			opts = append(opts, "clustering-row-count="+strconv.Itoa(w.ClusteringRowCount))
		}
		if w.ClusteringRowSize != "" {
			opts = append(opts, "clustering-row-size="+w.ClusteringRowSize)
		}
		return stress.SBSpec(opts...)
	}
	return stress.KVSpec
}

// Model is the workload's model, parsed from ModelSpec.
func (w Workload) Model() (stress.Model, error) { return stress.ParseModel(w.ModelSpec()) }

// readProfile reads workload.profile, relative to the scenario file's
// directory (the working directory for stdin), so that the spec carries the
// profile itself; the path becomes absolute, so the resolved scenario
// (scenario.yaml) names the same file from anywhere.
func readProfile(s *Scenario, d *decoder, source string) {
	w := &s.Workload
	if w.Profile == "" {
		return
	}
	path := resolveScenarioPath(w.Profile, source)
	data, err := readLimited(path, MaxProfileSize)
	if err != nil {
		d.problem(fieldProfile, "cannot read the profile %s: %v", w.Profile, err)
		d.undecodable[fieldProfile] = true // reported: not judged again
		return
	}
	w.Profile, w.profileYAML = path, data
}

// readUserCommand reads a `cassandra-stress user profile=… ops(…)`
// workload.stress_cmd as workload.profile and workload.ops are read: the
// profile relative to the scenario file, at load, its ops(...), cl= and
// -rate for the profile form (stress.ProfileOptions). What the profile
// form cannot honour is an error naming the option: -pop (partitions are
// drawn among those the fill wrote, by workload.distribution); -insert's
// parameters win over the profile's insert: section, as in cassandra-stress.
func readUserCommand(s *Scenario, d *decoder, source string) {
	w := &s.Workload
	if w.StressCmd == "" || !csstress.IsUser(w.StressCmd) {
		return
	}
	u, err := csstress.ParseUser(w.StressCmd)
	switch {
	case err != nil:
		d.problem(fieldStressCmd, "%v", err)
	case u.Pop != "":
		d.problem(fieldStressCmd, "-pop %s: not supported with a user profile: partitions are drawn among those the fill wrote, by workload.distribution", u.Pop)
	default:
		path := resolveScenarioPath(u.Profile, source)
		data, rerr := readLimited(path, MaxProfileSize)
		if rerr != nil {
			d.problem(fieldStressCmd, "user profile=%s: cannot read the profile: %v", u.Profile, rerr)
			break
		}
		// The resolved scenario names the same file from anywhere.
		w.StressCmd = strings.Replace(w.StressCmd, "profile="+u.Profile, "profile="+path, 1)
		u.Profile, w.user, w.profileYAML = path, u, data
		return
	}
	d.undecodable[fieldStressCmd] = true // reported: not judged again
}

// userOptions are the user line's settings the profile form applies.
func userOptions(u *csstress.User) stress.ProfileOptions {
	o := stress.ProfileOptions{CL: u.CL.String(), Threads: u.Threads, Insert: u.Insert}
	if u.RateGiven {
		o.Rate = u.Rate
	}
	return o
}

// resolveScenarioPath is path relative to the scenario file's directory
// (the working directory for stdin), made absolute.
func resolveScenarioPath(path, source string) string {
	if !filepath.IsAbs(path) && source != "-" && source != "<scenario>" {
		path = filepath.Join(filepath.Dir(source), path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path
}

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// validateModel checks the workload's form fields and that its model
// parses: a form's own error (an unsupported cassandra-stress option, a
// profile's bad CQL) is reported at the field that chose the form.
func (w Workload) validateModel(given Given) []error {
	var errs checks
	var forms []string
	for _, f := range []string{fieldStressCmd, fieldProfile, fieldKind} {
		if given(f) || w.fieldValue(f) != "" {
			forms = append(forms, f)
		}
	}
	if len(forms) > 1 {
		errs.add(forms[1], "cannot be combined with %s: set one of workload.stress_cmd, workload.profile and workload.kind", forms[0])
		return errs
	}
	if w.Ops != "" && w.Profile == "" {
		errs.add("workload.ops", "is the ops(...) of a user profile: it needs workload.profile")
	}
	if w.Profile != "" && w.Ops == "" {
		errs.add("workload.ops", "is required with workload.profile: the operations and their ratios, e.g. insert=1,read1=2 (cassandra-stress's ops(...))")
	}
	for _, f := range []struct {
		path string
		set  bool
	}{{"workload.partition_count", w.PartitionCount != 0}, {"workload.clustering_row_count", w.ClusteringRowCount != 0}, {"workload.clustering_row_size", w.ClusteringRowSize != ""}} {
		if f.set && w.Kind == "" {
			errs.add(f.path, "is a scylla-bench option: it needs workload.kind")
		}
	}
	errs.nonNegative("workload.partition_count", float64(w.PartitionCount))
	errs.nonNegative("workload.clustering_row_count", float64(w.ClusteringRowCount))
	form := w.Form()
	if form == "" || len(errs) > 0 || (form == fieldProfile && w.profileYAML == nil) ||
		(form == fieldStressCmd && w.user == nil && csstress.IsUser(w.StressCmd)) { // reported at load
		return errs
	}
	if _, err := w.Model(); err != nil {
		errs.add(form, "%v", err)
	}
	return errs
}

func (w Workload) fieldValue(path string) string {
	switch path {
	case fieldStressCmd:
		return w.StressCmd
	case fieldProfile:
		return w.Profile
	}
	return w.Kind
}

// Replaced are the scenario's settings, given in the file or by --set, that
// the workload model's own replace: a form carries its mix, consistency
// levels and values (workload.mix, workload.consistency.*,
// dataset.value_size), and a model with a rate of its own
// (stress.RateSetter: a stress_cmd's -rate) its rate and concurrency. The
// built-in model replaces nothing. They are warnings, not errors (plan
// notes them, validate warns at their lines): `--set workload.stress_cmd=…`
// over a scenario with a mix is the usual way to try a command line, and
// the resolved scenario (scenario.yaml) holds every default beside the form.
func (s *Scenario) Replaced(m stress.Model, given Given) []string {
	if s.Workload.Form() == "" || m == nil {
		return nil
	}
	paths := []string{"workload.mix", "workload.consistency.write", "workload.consistency.read", "dataset.value_size"}
	if rs, ok := m.(stress.RateSetter); ok {
		if rate, ok := rs.Rate(); ok && rate > 0 {
			paths = append(paths, "workload.rate", "workload.load_percent")
		}
		if rs.Threads() > 0 {
			paths = append(paths, "workload.concurrency")
		}
	}
	var out []string
	for _, p := range paths {
		if given(p) {
			out = append(out, p)
		}
	}
	return out
}
