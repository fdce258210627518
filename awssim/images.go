package awssim

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"
)

// The accounts that publish ScyllaDB machine images, as SCT lists them
// (scylla-cluster-tests sdcm/utils/common.py SCYLLA_AMI_OWNER_ID_LIST).
// Released images are in ReleaseOwnerID: the images of SCT's
// unit_tests/test_data/mocked_ami_data.json, a DescribeImages of both
// accounts (unit_tests/gen_ami_list.py), are all owned by it.
const (
	ScyllaOwnerID  = "797456418907"
	ReleaseOwnerID = "158855661827"
)

// Image is a machine image the region serves.
type Image struct {
	ID, Name, Description string
	Owner                 string // account id
	Arch                  string // EC2's architecture: x86_64 or arm64
	Created               string // creationDate, ISO 8601 UTC with milliseconds
	Tags                  map[string]string
}

// PublishedImages are the production images of a ScyllaDB version, one per
// architecture, named and tagged as ScyllaDB publishes them; n numbers the
// version (ids and build dates differ per version, later n is newer).
//
// Tags are the AWS builder's of scylla-machine-image packer/scylla.json with
// the values packer/build_image.sh passes: Name is its IMAGE_NAME
// "<product>-<version>-<arch>-<date '+%FT%T'>" after packer's
// clean_resource_name (':' becomes '-'), arch is build_image.sh's --arch
// (x86_64 or aarch64), scylla_version is "<version>-<release>" and
// environment is the --env-tag a release gets (production). The AMI's own
// name is the promoted copy's, "ScyllaDB <version>" and "... ARM" for arm64,
// as in SCT's mocked_ami_data.json ("ScyllaDB Enterprise 2024.2.5 ARM";
// from 2025.1 the product is "scylla", without "Enterprise").
func PublishedImages(n int, version string) []Image {
	built := time.Date(2025, 1, 1, 9, 30, 0, 0, time.UTC).AddDate(0, 0, 7*n)
	h := fnv.New64a()
	h.Write([]byte(version))
	commit := fmt.Sprintf("%012x", h.Sum64())[:12]
	release := fmt.Sprintf("0.%s.%s-1", built.AddDate(0, 0, -2).Format("20060102"), commit)
	var out []Image
	for i, a := range []struct{ ec2, build, suffix string }{{"x86_64", "x86_64", ""}, {"arm64", "aarch64", " ARM"}} {
		stamp := built.Add(time.Duration(i) * time.Second)
		out = append(out, Image{
			ID:          fmt.Sprintf("ami-5c%015x", 2*n+i+1),
			Name:        "ScyllaDB " + version + a.suffix,
			Description: "ScyllaDB " + version + a.suffix,
			Owner:       ReleaseOwnerID,
			Arch:        a.ec2,
			Created:     stamp.Add(2 * time.Hour).Format("2006-01-02T15:04:05.000Z"),
			Tags: map[string]string{
				"Name":                         fmt.Sprintf("scylla-%s-%s-%s", version, a.build, stamp.Format("2006-01-02T15-04-05")),
				"scylla_version":               version + "-" + release,
				"scylla_machine_image_version": fmt.Sprintf("%s-%s.%s-1", version, built.Format("20060102"), commit[:7]),
				"environment":                  "production",
				"arch":                         a.build,
				"build_mode":                   "release",
				"branch":                       "branch-" + minorOf(version),
				"creation_timestamp":           stamp.Format("2006-01-02T15-04-05"),
				"user_data_format_version":     "3",
			},
		})
	}
	return out
}

// minorOf is "2025.1" of "2025.1.0".
func minorOf(version string) string {
	if p := strings.SplitN(version, ".", 3); len(p) >= 2 {
		return p[0] + "." + p[1]
	}
	return version
}

// wildcardMatch applies an EC2 filter value to v: '*' matches any run of
// characters, '?' exactly one, and a backslash makes the next character
// literal ("a filter value of \*amazon\?\\ specifies the literal string
// *amazon?\", EC2 API Filter). Values are case-sensitive.
func wildcardMatch(pattern, v string) bool {
	p, s := []rune(pattern), []rune(v)
	// star and its resume points: the classic linear-time glob.
	pi, si, starP, starS := 0, 0, -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch c := p[pi]; {
			case c == '*':
				starP, starS = pi, si
				pi++
				continue
			case c == '?':
				pi, si = pi+1, si+1
				continue
			case c == '\\' && pi+1 < len(p):
				if p[pi+1] == s[si] {
					pi, si = pi+2, si+1
					continue
				}
			case c == s[si]:
				pi, si = pi+1, si+1
				continue
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		pi, si = starP+1, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
