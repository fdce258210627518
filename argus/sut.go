package argus

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/elasticity-dev/elasticity/results"
)

// SUTPackageName is the package Argus dates results by (client_service.py
// submit_results: sut_package_name, default scylla-server).
const SUTPackageName = "scylla-server"

// startLine is how ScyllaDB names its version as it starts (main.cc:
// "Scylla version {} with build-id {} starting ..." and "Scylla version {}
// initialization completed."); the emulator prints the same lines with the
// version it reports.
var startLine = regexp.MustCompile(`Scylla version (\S+?)(?: with build-id ([0-9a-fA-F]+))?(?: starting|\s+initialization completed)`)

// scyllaVersion is SCT's parse of `scylla --version`
// (sdcm/tester.py generate_scylla_server_package): main version, build
// date YYYYMMDD and commit, e.g. 2025.1.0-0.20250325.3eb8ef8c2ca4.
var scyllaVersion = regexp.MustCompile(`^([\w.~]+)-(?:0.)?([0-9]{8}).(\w+)`)

// SUT is the version of the database a run tested, as Argus is told it.
type SUT struct {
	Package Package
	// Dated: the version carries a build date and revision, from which
	// Argus derives each table's sut_timestamp (SCTTestRun.sut_timestamp).
	Dated bool
	// Source says where the version was read.
	Source string
}

// SUTOf reads the version the database reported from the run's node logs
// (logs/*.log); without such a line it falls back to the scenario's
// configured cluster.version and says so.
func SUTOf(dir string, res *results.Result) (*SUT, error) {
	version, buildID, file, err := reportedVersion(filepath.Join(dir, results.DirLogs))
	if err != nil {
		return nil, err
	}
	source := "reported by the database in " + file
	if version == "" {
		version = res.Setup.DatabaseVersion
		source = "the scenario's cluster.version (no ScyllaDB start line in " + results.DirLogs + "/)"
	}
	if version == "" {
		return nil, nil
	}
	pkg := Package{Name: SUTPackageName, Version: version, BuildID: buildID}
	m := scyllaVersion.FindStringSubmatch(version)
	if m == nil {
		return &SUT{Package: pkg, Source: source}, nil
	}
	pkg.Version = strings.ReplaceAll(m[1], "~", ".")
	pkg.Date, pkg.RevisionID = m[2], m[3]
	if pkg.BuildID == "" {
		pkg.BuildID = "#NO_BUILDID" // SCT's placeholder
	}
	return &SUT{Package: pkg, Dated: true, Source: source}, nil
}

// reportedVersion is the first ScyllaDB start line's version (and build id)
// in the node logs, preferring a line that carries a build id.
func reportedVersion(logDir string) (version, buildID, file string, err error) {
	names, err := filepath.Glob(filepath.Join(logDir, "*.log"))
	if err != nil {
		return "", "", "", fmt.Errorf("argus: listing %s: %w", logDir, err)
	}
	sort.Strings(names)
	for _, name := range names {
		v, b, err := versionInLog(name)
		if err != nil {
			return "", "", "", err
		}
		if v != "" && (version == "" || (buildID == "" && b != "")) {
			version, buildID, file = v, b, filepath.Join(results.DirLogs, filepath.Base(name))
		}
		if buildID != "" {
			break
		}
	}
	return version, buildID, file, nil
}

func versionInLog(path string) (version, buildID string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("argus: reading %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := startLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if version == "" {
			version = m[1]
		}
		if m[2] != "" && m[1] == version {
			return version, m[2], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", fmt.Errorf("argus: reading %s: %w", path, err)
	}
	return version, "", nil
}
