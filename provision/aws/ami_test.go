package aws

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/elasticity-dev/elasticity/awssim"
	"github.com/elasticity-dev/elasticity/provision"
)

// The tag:scylla_version values SCT's _get_ami_versions builds
// (sdcm/utils/common.py), worked by hand from its code.
func TestScyllaImageQueryIsSCTs(t *testing.T) {
	for _, c := range []struct {
		version, tag string
		production   bool
	}{
		{"", "*", true},
		{"all", "*", true},
		{"2025.1", "*2025.1*", true},
		{"2025.1.0", "*2025.1.0?*", true},
		{"enterprise-2024.2.5", "*2024.2.5?*", true},
		{"2025.4.0~rc2", "*2025.4.0?rc2?*", true},
		{"2025.1.0.rc1", "*2025.1.0?rc1?*", true},
		// Full build tags (SCYLLA_VERSION_GROUPED_RE) match as a prefix, any environment.
		{"2024.2.5-0.20250221.cb9e2a54ae6d-1", "2024.2.5-0.20250221.cb9e2a54ae6d-1*", false},
		{"5.2.0-dev-0.20220829.67c91e8bcd61", "5.2.0-dev-0.20220829.67c91e8bcd61*", false},
		{"2025.4.0~rc2-0.20251015.83babc20e3f7", "2025.4.0~rc2-0.20251015.83babc20e3f7*", false},
	} {
		q := scyllaImageQuery(c.version)
		if q.tagValue != c.tag || q.production != c.production {
			t.Errorf("%q: tag:scylla_version=%q production=%v, want %q %v", c.version, q.tagValue, q.production, c.tag, c.production)
		}
	}
}

// simImages is a simulated region serving the published images of three
// versions and the images a lookup must pass over, all newer than the
// release it wants: a debug build, a release candidate, another account's
// copy and an untagged image named like a release.
func simImages(t *testing.T) (*awssim.Region, *ec2.Client) {
	t.Helper()
	newer := "2026-06-01T00:00:00.000Z"
	prod := func(version, name string) map[string]string {
		return map[string]string{"scylla_version": version + "-0.20260530.0123456789ab-1", "environment": "production", "Name": name, "arch": "x86_64"}
	}
	s := newSim(t, func(o *awssim.Options) {
		o.Versions = []string{"2025.1.0", "2025.4.0", "2025.4.5"}
		o.Images = append(o.Images,
			awssim.Image{ID: "ami-debug", Name: "debug-scylla-2025.4.5-x86_64-2026-06-01T00-00-00", Owner: awssim.ScyllaOwnerID, Arch: "x86_64", Created: newer,
				Tags: prod("2025.4.5", "debug-scylla-2025.4.5-x86_64-2026-06-01T00-00-00")},
			awssim.Image{ID: "ami-rc", Name: "scylla-2025.4.6~rc1-x86_64", Owner: awssim.ScyllaOwnerID, Arch: "x86_64", Created: newer,
				Tags: map[string]string{"scylla_version": "2025.4.6~rc1-0.20260530.0123456789ab", "environment": "candidate", "Name": "scylla-2025.4.6~rc1-x86_64-2026-06-01T00-00-00"}},
			awssim.Image{ID: "ami-foreign", Name: "ScyllaDB 2025.4.5", Owner: "111122223333", Arch: "x86_64", Created: newer,
				Tags: prod("2025.4.5", "scylla-2025.4.5-x86_64-2026-06-01T00-00-00")},
			awssim.Image{ID: "ami-untagged", Name: "ScyllaDB 2025.4.5", Owner: awssim.ScyllaOwnerID, Arch: "x86_64", Created: newer},
		)
	})
	return s.Region, s.client
}

// publishedID is the id of a version's published image of an architecture.
func publishedID(n int, version, arch string) string {
	for _, im := range awssim.PublishedImages(n, version) {
		if im.Arch == arch {
			return im.ID
		}
	}
	return ""
}

func TestLookupFindsThePublishedImageAsSCTDoes(t *testing.T) {
	_, c := simImages(t)
	full := awssim.PublishedImages(0, "2025.1.0")[0].Tags["scylla_version"]
	for _, tc := range []struct{ version, instanceType, want string }{
		{"2025.4.5", "i4i.large", publishedID(2, "2025.4.5", "x86_64")},
		{"2025.4.5", "i8g.large", publishedID(2, "2025.4.5", "arm64")},
		{"2025.4.0", "i4i.large", publishedID(1, "2025.4.0", "x86_64")},
		{"2025.4", "i4i.large", publishedID(2, "2025.4.5", "x86_64")}, // the newest 2025.4 release
		{"", "i4i.large", publishedID(2, "2025.4.5", "x86_64")},       // the newest release
		{"2025.1.0", "i7ie.large", publishedID(0, "2025.1.0", "x86_64")},
		{full, "i4i.large", publishedID(0, "2025.1.0", "x86_64")},
	} {
		var logs strings.Builder
		p, err := New(context.Background(), Options{Region: "us-east-1", Client: c, Logf: func(f string, a ...any) { fmt.Fprintf(&logs, f+"\n", a...) }})
		if err != nil {
			t.Fatal(err)
		}
		p.spec = provision.ClusterSpec{Version: tc.version}
		got, err := p.imageFor(context.Background(), tc.instanceType)
		if err != nil || got != tc.want {
			t.Errorf("version %q on %s: %s %v, want %s\n%s", tc.version, tc.instanceType, got, err, tc.want, logs.String())
		}
	}
}

func TestLookupNamesWhatItFoundNothingFor(t *testing.T) {
	_, c := simImages(t)
	p, err := New(context.Background(), Options{Region: "us-east-1", Client: c})
	if err != nil {
		t.Fatal(err)
	}
	p.spec = provision.ClusterSpec{Version: "2026.1.0"}
	_, err = p.imageFor(context.Background(), "i4i.large")
	if err == nil {
		t.Fatal("no 2026.1.0 image is published: want an error")
	}
	for _, want := range []string{"scylla_version 2026.1.0", "x86_64", "us-east-1", "*2026.1.0?*", "environment=production", "797456418907, 158855661827", "aws.ami"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	// aws.ami overrides the lookup: an image id the region does not publish is used as given.
	p, _ = New(context.Background(), Options{Region: "us-east-1", Client: c, AMI: "ami-mine"})
	p.spec = provision.ClusterSpec{Version: "2026.1.0"}
	if got, err := p.imageFor(context.Background(), "i4i.large"); err != nil || got != "ami-mine" {
		t.Errorf("aws.ami: %s %v", got, err)
	}
}

func TestPlanNamesTheLookup(t *testing.T) {
	c := &provision.Config{Options: &Settings{Region: "eu-west-1"}}
	c.Cluster.Version = "2025.1.0"
	var image string
	for _, l := range planLines(c, provision.PlanFacts{InstanceCounts: map[string]int{"i4i.large": 3}}) {
		if l.Label == "image" {
			image = l.Value
		}
	}
	for _, want := range []string{"scylla_version=*2025.1.0?*", "environment=production", "797456418907, 158855661827", "eu-west-1", "architecture", "aws.ami"} {
		if !strings.Contains(image, want) {
			t.Errorf("plan's image line %q does not name %q", image, want)
		}
	}
}
