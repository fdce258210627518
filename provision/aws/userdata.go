package aws

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/elasticity-dev/elasticity/provision"
)

// scyllaUserData is the ScyllaDB machine image's user-data format
// (scylla-machine-image): scylla.yaml overrides plus start-up switches.
type scyllaUserData struct {
	ScyllaYAML             map[string]any `json:"scylla_yaml"`
	StartScyllaOnFirstBoot bool           `json:"start_scylla_on_first_boot"`
}

// UserData renders base64 user-data for a node: cluster name, seeds,
// Ec2Snitch (racks are AZs), the REST API on every interface, and any extra
// database arguments given as scylla.yaml keys (`--key=value` or `key: value`).
//
// api_address: the image keeps the packaged scylla.yaml's 127.0.0.1
// (scylladb conf/scylla.yaml; scylla-machine-image scylla_configure.py does
// not set it), which no runner outside the instance can reach; readiness,
// decommission and quiesce all go through REST. The run's security group
// still opens 10000 to the runner's address only.
func UserData(spec provision.ClusterSpec, seeds []string) (string, error) {
	y := map[string]any{
		"cluster_name":    spec.ClusterName,
		"endpoint_snitch": "org.apache.cassandra.locator.Ec2Snitch",
		"api_address":     "0.0.0.0",
	}
	if len(seeds) > 0 {
		y["seed_provider"] = []map[string]any{{
			"class_name": "org.apache.cassandra.locator.SimpleSeedProvider",
			"parameters": []map[string]string{{"seeds": strings.Join(seeds, ",")}},
		}}
	}
	for _, a := range spec.ExtraArgs {
		k, v, ok := splitArg(a)
		if !ok {
			return "", fmt.Errorf("aws: extra database argument %q is not key=value or key: value", a)
		}
		y[k] = v
	}
	b, err := json.Marshal(scyllaUserData{ScyllaYAML: y, StartScyllaOnFirstBoot: true})
	if err != nil {
		return "", fmt.Errorf("aws: encoding user-data: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// Ec2SnitchDC names the DC and rack the way ScyllaDB's Ec2Snitch does
// (scylladb locator/ec2_snitch.cc): the rack is the zone's last '-' part,
// the DC the zone without its letter, and without a trailing "1" as well
// (CASSANDRA-4026): us-east-1a → us-east / 1a, eu-west-2b → eu-west-2 / 2b.
func Ec2SnitchDC(zone string) (dc, rack string) {
	i := strings.LastIndex(zone, "-")
	if i < 0 || len(zone) < 3 {
		return zone, zone
	}
	rack = zone[i+1:]
	dc = zone[:len(zone)-1]
	if strings.HasSuffix(dc, "1") {
		dc = zone[:len(zone)-3]
	}
	return dc, rack
}

func splitArg(a string) (string, string, bool) {
	a = strings.TrimLeft(a, "-")
	for _, sep := range []string{"=", ": "} {
		if k, v, ok := strings.Cut(a, sep); ok && k != "" {
			return strings.ReplaceAll(k, "-", "_"), strings.TrimSpace(v), true
		}
	}
	return "", "", false
}

// Anything that looks like an AWS access key id, secret or session token.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{12,}`),
	regexp.MustCompile(`(?i)(aws_secret_access_key|secret_?access_?key|secretkey|x-amz-security-token|aws_session_token|signature|credential)(["'=:\s]+)[^\s"',&]+`),
}

// redact removes credential-looking material from an error's text, so that
// no credential value reaches logs, results or messages even if an SDK or a
// proxy echoes a signed request back.
func redact(err error) string {
	if err == nil {
		return ""
	}
	return RedactString(err.Error())
}

// RedactString applies the credential filters to any text.
func RedactString(s string) string {
	s = secretPatterns[0].ReplaceAllString(s, "[REDACTED]")
	return secretPatterns[1].ReplaceAllString(s, "$1$2[REDACTED]")
}
