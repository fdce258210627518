package aws

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// The ScyllaDB machine image is found as scylla-cluster-tests finds it
// (sdcm/utils/common.py get_scylla_ami_versions and _get_ami_versions,
// called from sdcm/sct_config.py when ami_id_db_scylla is unset): by its
// scylla_version tag, not its name, among the images of ScyllaDB's
// accounts, of the instance type's architecture, production builds only,
// debug builds left out, the newest first. scylla-machine-image's packer
// build sets those tags (packer/scylla.json, values from
// packer/build_image.sh).

// scyllaImageOwners are the accounts SCT searches (sdcm/utils/common.py
// SCYLLA_AMI_OWNER_ID_LIST).
var scyllaImageOwners = []string{"797456418907", "158855661827"}

// fullVersionTag is SCT's SCYLLA_VERSION_GROUPED_RE (sdcm/utils/version_utils.py),
// matched at the start as Python's re.match does: a full build tag such as
// 2024.2.5-0.20250221.cb9e2a54ae6d-1 names one build.
var fullVersionTag = regexp.MustCompile(`^[\w.~]+(?:-(?:dev|enterprise))?[-~](?:(?:0|rc\d+)\.)?\d{8}\.[a-f0-9]+`)

// imageQuery is the DescribeImages a cluster version asks for.
type imageQuery struct {
	version    string // as configured; "" = any
	tagValue   string // the tag:scylla_version filter value
	production bool   // tag:environment=production
}

// scyllaImageQuery mirrors _get_ami_versions and get_scylla_ami_versions'
// _process_enterprise_scylla_version: a full build tag matches as a prefix
// and takes any environment; "" or "all" is any version; otherwise the
// version ("enterprise-" dropped) is matched anywhere in the tag, followed
// by '-' when it has three parts, and '-', '~' and ".rc" become the
// one-character wildcard, so 2025.1.0 asks for *2025.1.0?* and 2025.1 for
// *2025.1*.
func scyllaImageQuery(version string) imageQuery {
	q := imageQuery{version: version, tagValue: "*", production: true}
	switch {
	case version == "" || version == "all":
	case fullVersionTag.MatchString(version):
		q.tagValue, q.production = version+"*", false
	default:
		base := strings.ReplaceAll(version, "enterprise-", "")
		v := "*" + base + "*"
		if len(strings.Split(version, ".")) >= 3 {
			v = "*" + base + "-*"
		}
		q.tagValue = strings.NewReplacer("-", "?", "~", "?", ".rc", "?rc").Replace(v)
	}
	return q
}

// filters are SCT's, in its order: version tag, architecture, environment.
func (q imageQuery) filters(arch string) []types.Filter {
	fs := []types.Filter{
		{Name: awssdk.String("tag:scylla_version"), Values: []string{q.tagValue}},
		{Name: awssdk.String("architecture"), Values: []string{arch}},
	}
	if q.production {
		fs = append(fs, types.Filter{Name: awssdk.String("tag:environment"), Values: []string{"production"}})
	}
	return fs
}

// String says what is looked for, for the plan and for errors.
func (q imageQuery) String() string {
	s := "tag scylla_version=" + q.tagValue
	if q.production {
		s += ", environment=production"
	}
	return s + " from ScyllaDB's accounts " + strings.Join(scyllaImageOwners, ", ")
}

// newestUsable is SCT's choice among the answers: images whose Name tag
// has "debug" in it are dropped (debug builds, packer/build_image.sh
// --debug and --build-mode debug), then the newest creation date wins
// (ISO 8601 in UTC, so the strings order as the times do).
func newestUsable(images []types.Image) (types.Image, bool) {
	var best types.Image
	found := false
	for _, im := range images {
		if strings.Contains(tagOf(im.Tags, "Name"), "debug") {
			continue
		}
		if !found || awssdk.ToString(im.CreationDate) > awssdk.ToString(best.CreationDate) {
			best, found = im, true
		}
	}
	return best, found
}

func tagOf(tags []types.Tag, key string) string {
	for _, t := range tags {
		if awssdk.ToString(t.Key) == key {
			return awssdk.ToString(t.Value)
		}
	}
	return ""
}

// lookupAMI finds the ScyllaDB machine image of a version (any version when
// none is given) for an architecture by SCT's rule.
func (p *Provider) lookupAMI(ctx context.Context, version, arch string) (string, error) {
	q := scyllaImageQuery(version)
	what := "scylla_version " + version
	if version == "" {
		what = "any scylla_version (set cluster.version or aws.ami to choose)"
	}
	out, err := p.client.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: scyllaImageOwners, Filters: q.filters(arch)})
	if err != nil {
		return "", fmt.Errorf("aws: looking up the ScyllaDB image of %s for %s in %s (%s): %s", what, arch, p.opts.Region, q, redact(err))
	}
	best, ok := newestUsable(out.Images)
	if !ok {
		return "", fmt.Errorf("aws: no ScyllaDB image of %s for %s in %s (%s, architecture %s, debug builds excluded); set cluster.version to a published version or aws.ami to an image id",
			what, arch, p.opts.Region, q, arch)
	}
	p.logf("using image %s (%s, scylla_version %s, %s, owner %s)", awssdk.ToString(best.ImageId), awssdk.ToString(best.Name),
		tagOf(best.Tags, "scylla_version"), arch, awssdk.ToString(best.OwnerId))
	return awssdk.ToString(best.ImageId), nil
}
