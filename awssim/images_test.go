package awssim

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// EC2's filter wildcards (EC2 API Filter): '*' any run, '?' exactly one,
// backslash escapes; nothing else is special and case matters.
func TestWildcardMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, v string
		want       bool
	}{
		{"*2025.1.0?*", "2025.1.0-0.20250101.0123456789ab-1", true},
		{"*2025.1.0?*", "2025.1.0", false},
		{"*2025.1*", "2025.1.3-0.20250301.0123456789ab-1", true},
		{"2025.1.0-0.20250101.0123456789ab-1*", "2025.1.0-0.20250101.0123456789ab-1", true},
		{"ubuntu/images/*", "ubuntu/images/hvm-ssd/ubuntu-noble-24.04-amd64-server", true}, // '*' crosses '/'
		{"[abc]", "[abc]", true},                                                           // brackets are literal
		{"[abc]", "a", false},
		{`\*amazon\?\\`, `*amazon?\`, true},
		{`\*amazon\?\\`, `xamazony\`, false},
		{"ScyllaDB*", "scylladb 2025.1.0", false},
		{"a?c", "ac", false},
		{"a*b*c", "aXbYbZc", true},
		{"", "", true},
		{"", "x", false},
	} {
		if got := wildcardMatch(c.pattern, c.v); got != c.want {
			t.Errorf("%q on %q: %v, want %v", c.pattern, c.v, got, c.want)
		}
	}
}

// imageRegion serves images without launching anything (no ssh, no root).
func imageRegion(t *testing.T, o Options) *ec2.Client {
	t.Helper()
	o.Binary, o.Dir = elasticityBin, t.TempDir()
	r, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return ec2.New(ec2.Options{Region: "us-east-1", BaseEndpoint: awssdk.String(r.Endpoint()),
		Credentials: credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""), RetryMaxAttempts: 1})
}

func ids(out *ec2.DescribeImagesOutput) []string {
	var s []string
	for _, im := range out.Images {
		s = append(s, *im.ImageId)
	}
	sort.Strings(s)
	return s
}

func filters(kv ...string) []types.Filter {
	var fs []types.Filter
	for i := 0; i+1 < len(kv); i += 2 {
		fs = append(fs, types.Filter{Name: awssdk.String(kv[i]), Values: []string{kv[i+1]}})
	}
	return fs
}

// The published images as SCT reads them: names and tags of
// scylla-machine-image's packer build, SCT's SCYLLA_VERSION_GROUPED_RE
// parses the scylla_version tag.
func TestPublishedImagesAreNamedAndTaggedAsScyllaDBs(t *testing.T) {
	c := imageRegion(t, Options{Versions: []string{"2025.1.0", "2026.1.0"}})
	out, err := c.DescribeImages(context.Background(), &ec2.DescribeImagesInput{Owners: []string{ScyllaOwnerID, ReleaseOwnerID}})
	if err != nil || len(out.Images) != 4 {
		t.Fatalf("DescribeImages: %v, %d images", err, len(out.Images))
	}
	nameTag := regexp.MustCompile(`^scylla-(2025\.1\.0|2026\.1\.0)-(x86_64|aarch64)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d$`)
	grouped := regexp.MustCompile(`^[\w.~]+(?:-(?:dev|enterprise))?[-~](?:(?:0|rc\d+)\.)?\d{8}\.[a-f0-9]+`)
	for _, im := range out.Images {
		tags := map[string]string{}
		for _, tg := range im.Tags {
			tags[*tg.Key] = *tg.Value
		}
		m := nameTag.FindStringSubmatch(tags["Name"])
		if m == nil || tags["arch"] != m[2] || tags["environment"] != "production" || !grouped.MatchString(tags["scylla_version"]) ||
			tags["scylla_version"][:len(m[1])+1] != m[1]+"-" {
			t.Errorf("%s: tags %v", *im.ImageId, tags)
			continue
		}
		wantName, wantArch := "ScyllaDB "+m[1], types.ArchitectureValuesX8664
		if m[2] == "aarch64" {
			wantName, wantArch = wantName+" ARM", types.ArchitectureValuesArm64
		}
		if *im.Name != wantName || im.Architecture != wantArch || *im.OwnerId != ReleaseOwnerID {
			t.Errorf("%s: name %q arch %s owner %s, want %q %s %s", *im.ImageId, *im.Name, im.Architecture, *im.OwnerId, wantName, wantArch, ReleaseOwnerID)
		}
	}
}

// Owner.N, tag:<key>, tag-key and the other filters as EC2 applies them.
func TestDescribeImagesFilters(t *testing.T) {
	c := imageRegion(t, Options{Versions: []string{"2025.1.0", "2025.4.0"}, Images: []Image{
		{ID: "ami-other", Name: "ScyllaDB 2025.4.0", Owner: "111122223333", Arch: "x86_64", Created: "2026-01-01T00:00:00.000Z",
			Tags: map[string]string{"scylla_version": "2025.4.0-0.20251101.0123456789ab-1", "environment": "production"}},
		{ID: "ami-daily", Name: "scylla-2026.1.0-dev-x86_64", Owner: ScyllaOwnerID, Arch: "x86_64", Created: "2026-01-01T00:00:00.000Z",
			Tags: map[string]string{"scylla_version": "2026.1.0~dev-0.20251231.0123456789ab", "environment": "daily"}},
	}})
	x86_2025_4 := PublishedImages(1, "2025.4.0")[0].ID
	ctx := context.Background()
	for _, tc := range []struct {
		what   string
		owners []string
		fs     []types.Filter
		want   []string
	}{
		{"SCT's query for 2025.4.0", []string{ScyllaOwnerID, ReleaseOwnerID},
			filters("tag:scylla_version", "*2025.4.0?*", "architecture", "x86_64", "tag:environment", "production"), []string{x86_2025_4}},
		{"any owner", nil, filters("tag:scylla_version", "*2025.4.0?*", "architecture", "x86_64"), []string{"ami-other", x86_2025_4}},
		{"another owner only", []string{"111122223333"}, filters("tag:scylla_version", "*"), []string{"ami-other"}},
		{"self owns none", []string{"self"}, nil, nil},
		{"not production", []string{ScyllaOwnerID, ReleaseOwnerID}, filters("tag:scylla_version", "*", "tag:environment", "production", "architecture", "x86_64"),
			[]string{PublishedImages(0, "2025.1.0")[0].ID, x86_2025_4}},
		{"tag-key", nil, filters("tag-key", "environ*", "tag:environment", "daily"), []string{"ami-daily"}},
		{"a tag the image lacks", nil, filters("tag:branch", "*"), []string{PublishedImages(0, "2025.1.0")[0].ID, PublishedImages(0, "2025.1.0")[1].ID, x86_2025_4, PublishedImages(1, "2025.4.0")[1].ID}},
		{"name", []string{ReleaseOwnerID}, filters("name", "ScyllaDB 2025.4.0*"), []string{x86_2025_4, PublishedImages(1, "2025.4.0")[1].ID}},
	} {
		out, err := c.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: tc.owners, Filters: tc.fs})
		if err != nil {
			t.Errorf("%s: %v", tc.what, err)
			continue
		}
		sort.Strings(tc.want)
		if got := ids(out); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, got, tc.want)
		}
	}
	// Two values of one filter are ORed.
	out, err := c.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []types.Filter{{Name: awssdk.String("tag:environment"), Values: []string{"daily", "nightly"}}}})
	if err != nil || !slices.Equal(ids(out), []string{"ami-daily"}) {
		t.Errorf("values ORed: %v %v", ids(out), err)
	}
	// A filter the region does not serve is refused, never ignored.
	if _, err := c.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: filters("platform", "windows")}); apiCode(err) != "InvalidParameterValue" {
		t.Errorf("unserved filter: %v", err)
	}
}
