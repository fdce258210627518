package aws

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// fakeEC2 is an httptest fake of the EC2 Query API subset the provider uses.
// It keeps instances and security groups in memory; instances are "running"
// with status OK after readyPolls DescribeInstances calls.
type fakeEC2 struct {
	mu         sync.Mutex
	srv        *httptest.Server
	requests   []url.Values
	headers    []http.Header
	instances  map[string]*fakeInstance
	order      []string
	sgs        map[string]*fakeSG
	nextID     int
	readyPolls int
	// failRunAt makes the n-th RunInstances call (1-based) fail with InsufficientInstanceCapacity.
	failRunAt int
	runCalls  int
	images    []fakeImage
	// impairedAt makes the n-th instance (1-based) fail its instance status
	// check, with reason in its state reason.
	impairedAt int
	reason     string
}

type fakeInstance struct {
	id, typ, az, ami, state, privateIP, publicIP, userData string
	tags                                                   map[string]string
	polls                                                  int
	reason                                                 string // stateReason's message
}

type fakeSG struct {
	id, name string
	tags     map[string]string
	perms    url.Values
}

type fakeImage struct{ id, name, created, arch string } // arch "" = x86_64

func newFakeEC2(t *testing.T) *fakeEC2 {
	f := &fakeEC2{instances: map[string]*fakeInstance{}, sgs: map[string]*fakeSG{}, readyPolls: 1}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

const (
	testAccessKey = "AKIAFAKEFAKEFAKE1234"
	testSecretKey = "s3cr3t/Fake+Secret/Key/ForTestsOnly0123456"
)

func (f *fakeEC2) client() *ec2.Client {
	return ec2.New(ec2.Options{
		Region:           "us-east-1",
		BaseEndpoint:     awssdk.String(f.srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider(testAccessKey, testSecretKey, "sessiontoken123"),
		RetryMaxAttempts: 1,
	})
}

func (f *fakeEC2) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	q, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "bad form", 400)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, q)
	f.headers = append(f.headers, r.Header.Clone())
	action := q.Get("Action")
	var inner string
	switch action {
	case "RunInstances":
		f.runCalls++
		if f.failRunAt > 0 && f.runCalls == f.failRunAt {
			f.fail(w, "InsufficientInstanceCapacity", "We currently do not have sufficient capacity in the Availability Zone you requested.")
			return
		}
		inner = f.runInstances(q)
	case "DescribeInstances":
		inner = f.describeInstances(q)
	case "DescribeInstanceStatus":
		inner = f.describeStatus(q)
	case "TerminateInstances", "StopInstances":
		inner = f.changeState(q, action)
	case "CreateSecurityGroup":
		f.nextID++
		g := &fakeSG{id: fmt.Sprintf("sg-%04d", f.nextID), name: q.Get("GroupName"), tags: tagsOf(q, "TagSpecification.1.")}
		f.sgs[g.id] = g
		inner = "<groupId>" + g.id + "</groupId>"
	case "AuthorizeSecurityGroupIngress":
		g := f.sgs[q.Get("GroupId")]
		if g == nil {
			f.fail(w, "InvalidGroup.NotFound", "no such group")
			return
		}
		g.perms = q
		inner = "<return>true</return>"
	case "DeleteSecurityGroup":
		id := q.Get("GroupId")
		for _, in := range f.instances {
			if in.state != "terminated" && in.tags["sg"] == id {
				f.fail(w, "DependencyViolation", "resource has a dependent object")
				return
			}
		}
		if f.sgs[id] == nil {
			f.fail(w, "InvalidGroup.NotFound", "no such group")
			return
		}
		delete(f.sgs, id)
		inner = "<return>true</return>"
	case "DescribeSecurityGroups":
		var b strings.Builder
		b.WriteString("<securityGroupInfo>")
		ids := make([]string, 0, len(f.sgs))
		for id := range f.sgs {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			g := f.sgs[id]
			fmt.Fprintf(&b, "<item><groupId>%s</groupId><groupName>%s</groupName>%s</item>", g.id, g.name, tagSetXML(g.tags))
		}
		b.WriteString("</securityGroupInfo>")
		inner = b.String()
	case "DescribeImages":
		var b strings.Builder
		b.WriteString("<imagesSet>")
		wantArch := ""
		for i := 1; q.Get(fmt.Sprintf("Filter.%d.Name", i)) != ""; i++ {
			if q.Get(fmt.Sprintf("Filter.%d.Name", i)) == "architecture" {
				wantArch = q.Get(fmt.Sprintf("Filter.%d.Value.1", i))
			}
		}
		for _, im := range f.images {
			arch := im.arch
			if arch == "" {
				arch = "x86_64"
			}
			if wantArch != "" && arch != wantArch {
				continue
			}
			fmt.Fprintf(&b, "<item><imageId>%s</imageId><name>%s</name><creationDate>%s</creationDate></item>", im.id, html.EscapeString(im.name), im.created)
		}
		b.WriteString("</imagesSet>")
		inner = b.String()
	case "CreateTags":
		inner = "<return>true</return>"
	default:
		f.fail(w, "InvalidAction", "fake EC2 does not know "+action)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><%sResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>req-1</requestId>%s</%sResponse>`, action, inner, action)
}

func (f *fakeEC2) fail(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(400)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>req-1</RequestID></Response>`, code, msg)
}

func tagsOf(q url.Values, prefix string) map[string]string {
	tags := map[string]string{}
	for i := 1; ; i++ {
		k := q.Get(fmt.Sprintf("%sTag.%d.Key", prefix, i))
		if k == "" {
			return tags
		}
		tags[k] = q.Get(fmt.Sprintf("%sTag.%d.Value", prefix, i))
	}
}

func tagSetXML(tags map[string]string) string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("<tagSet>")
	for _, k := range keys {
		fmt.Fprintf(&b, "<item><key>%s</key><value>%s</value></item>", html.EscapeString(k), html.EscapeString(tags[k]))
	}
	b.WriteString("</tagSet>")
	return b.String()
}

func (f *fakeEC2) runInstances(q url.Values) string {
	f.nextID++
	n := f.nextID
	in := &fakeInstance{
		id: fmt.Sprintf("i-%08d", n), typ: q.Get("InstanceType"), az: q.Get("Placement.AvailabilityZone"), ami: q.Get("ImageId"),
		state: "pending", privateIP: fmt.Sprintf("10.0.0.%d", n), publicIP: fmt.Sprintf("203.0.113.%d", n),
		userData: q.Get("UserData"), tags: tagsOf(q, "TagSpecification.1."),
	}
	if sub := q.Get("SubnetId"); sub != "" {
		in.az = "az-of-" + sub
	}
	in.tags["sg"] = q.Get("SecurityGroupId.1")
	f.instances[in.id] = in
	f.order = append(f.order, in.id)
	if len(f.order) == f.impairedAt {
		in.reason = f.reason
	}
	return "<reservationId>r-1</reservationId><ownerId>1</ownerId><instancesSet>" + instanceXML(in) + "</instancesSet>"
}

func instanceXML(in *fakeInstance) string {
	tags := map[string]string{}
	for k, v := range in.tags {
		if k != "sg" {
			tags[k] = v
		}
	}
	pub := ""
	if in.state == "running" {
		pub = "<ipAddress>" + in.publicIP + "</ipAddress>"
	}
	if in.reason != "" {
		pub += "<stateReason><code>Server.InternalError</code><message>" + html.EscapeString(in.reason) + "</message></stateReason>"
	}
	return fmt.Sprintf("<item><instanceId>%s</instanceId><imageId>%s</imageId><instanceType>%s</instanceType><placement><availabilityZone>%s</availabilityZone></placement><instanceState><code>0</code><name>%s</name></instanceState><privateIpAddress>%s</privateIpAddress>%s%s</item>",
		in.id, in.ami, in.typ, in.az, in.state, in.privateIP, pub, tagSetXML(tags))
}

// selected applies InstanceId.N and the tag/state filters the provider uses.
func (f *fakeEC2) selected(q url.Values) []*fakeInstance {
	ids := map[string]bool{}
	for i := 1; ; i++ {
		id := q.Get(fmt.Sprintf("InstanceId.%d", i))
		if id == "" {
			break
		}
		ids[id] = true
	}
	var out []*fakeInstance
	for _, id := range f.order {
		in := f.instances[id]
		if len(ids) > 0 && !ids[id] {
			continue
		}
		ok := true
		for i := 1; ; i++ {
			name := q.Get(fmt.Sprintf("Filter.%d.Name", i))
			if name == "" {
				break
			}
			vals := map[string]bool{}
			for j := 1; ; j++ {
				v := q.Get(fmt.Sprintf("Filter.%d.Value.%d", i, j))
				if v == "" {
					break
				}
				vals[v] = true
			}
			switch {
			case strings.HasPrefix(name, "tag:"):
				ok = ok && vals[in.tags[strings.TrimPrefix(name, "tag:")]]
			case name == "instance-state-name":
				ok = ok && vals[in.state]
			}
		}
		if ok {
			out = append(out, in)
		}
	}
	return out
}

func (f *fakeEC2) describeInstances(q url.Values) string {
	var b strings.Builder
	b.WriteString("<reservationSet>")
	for _, in := range f.selected(q) {
		if in.state == "pending" {
			in.polls++
			if in.polls >= f.readyPolls {
				in.state = "running"
			}
		}
		b.WriteString("<item><reservationId>r-1</reservationId><instancesSet>" + instanceXML(in) + "</instancesSet></item>")
	}
	b.WriteString("</reservationSet>")
	return b.String()
}

func (f *fakeEC2) describeStatus(q url.Values) string {
	var b strings.Builder
	b.WriteString("<instanceStatusSet>")
	for _, in := range f.selected(q) {
		if in.state != "running" {
			continue
		}
		st := "ok"
		if f.impairedAt > 0 && in.id == f.order[f.impairedAt-1] {
			st = "impaired"
		}
		fmt.Fprintf(&b, "<item><instanceId>%s</instanceId><availabilityZone>%s</availabilityZone><instanceState><code>16</code><name>running</name></instanceState><systemStatus><status>ok</status></systemStatus><instanceStatus><status>%s</status></instanceStatus></item>", in.id, in.az, st)
	}
	b.WriteString("</instanceStatusSet>")
	return b.String()
}

func (f *fakeEC2) changeState(q url.Values, action string) string {
	to := "terminated"
	if action == "StopInstances" {
		to = "stopped"
	}
	var b strings.Builder
	b.WriteString("<instancesSet>")
	for _, in := range f.selected(q) {
		in.state = to
		fmt.Fprintf(&b, "<item><instanceId>%s</instanceId><currentState><code>48</code><name>%s</name></currentState></item>", in.id, to)
	}
	b.WriteString("</instancesSet>")
	return b.String()
}

func (f *fakeEC2) live() []*fakeInstance {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*fakeInstance
	for _, id := range f.order {
		if in := f.instances[id]; in.state != "terminated" {
			out = append(out, in)
		}
	}
	return out
}

func (f *fakeEC2) actions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, q := range f.requests {
		out = append(out, q.Get("Action"))
	}
	return out
}

func testProvider(t *testing.T, f *fakeEC2, logs *strings.Builder, mut func(*Options)) *Provider {
	var mu sync.Mutex
	opts := Options{
		Region: "us-east-1", AvailabilityZones: []string{"us-east-1a", "us-east-1b", "us-east-1c"},
		KeyPair: "qa-key", RunnerCIDR: "198.51.100.7/32", PollInterval: time.Millisecond, ReadyTimeout: 5 * time.Second,
		Client: f.client(),
		Logf: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(logs, format+"\n", args...)
		},
		Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
	}
	if mut != nil {
		mut(&opts)
	}
	p, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
