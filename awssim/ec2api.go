package awssim

import (
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
)

// apiError is an EC2 error response (code and message as EC2 spells them).
type apiError struct{ code, msg string }

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func errf(code, format string, args ...any) *apiError {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP serves the EC2 Query API: form-encoded POSTs with Action=...,
// XML answers in the 2016-11-15 namespace, errors as <Response><Errors>.
// Requests must be SigV4-signed with the simulator's dummy access key, as
// the SDK's ordinary credential chain signs them.
func (r *Region) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, "reading the request", http.StatusBadRequest)
		return
	}
	q, err := url.ParseQuery(string(body))
	if err != nil {
		writeError(w, http.StatusBadRequest, errf("MalformedQueryString", "the request body is not form-encoded"))
		return
	}
	if auth := req.Header.Get("Authorization"); !strings.Contains(auth, "Credential="+AccessKeyID+"/") {
		writeError(w, http.StatusUnauthorized, errf("AuthFailure", "AWS was not able to validate the provided access credentials"))
		return
	}
	action := q.Get("Action")
	r.mu.Lock()
	r.calls = append(r.calls, action)
	aerr := r.noteCall(action, q, req.Header)
	var inner string
	if aerr == nil {
		inner, aerr = r.dispatch(action, q)
	}
	r.mu.Unlock()
	if aerr != nil {
		writeError(w, http.StatusBadRequest, aerr)
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<%sResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>%s</requestId>%s</%sResponse>`,
		action, r.requestID(), inner, action)
}

func writeError(w http.ResponseWriter, status int, e *apiError) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>sim</RequestID></Response>`,
		html.EscapeString(e.code), html.EscapeString(e.msg))
}

func (r *Region) requestID() string {
	r.reqs++
	return fmt.Sprintf("sim-%08d", r.reqs)
}

// dispatch runs one action with r.mu held.
func (r *Region) dispatch(action string, q url.Values) (string, *apiError) {
	switch action {
	case "RunInstances":
		return r.runInstances(q)
	case "DescribeInstances":
		return r.describeInstances(q)
	case "DescribeInstanceStatus":
		return r.describeStatus(q)
	case "TerminateInstances":
		return r.changeState(q, "terminate")
	case "StopInstances":
		if q.Get("Force") == "true" {
			return r.changeState(q, "kill")
		}
		return r.changeState(q, "stop")
	case "CreateSecurityGroup":
		return r.createSG(q)
	case "AuthorizeSecurityGroupIngress":
		return r.authorize(q)
	case "DeleteSecurityGroup":
		return r.deleteSG(q)
	case "DescribeSecurityGroups":
		return r.describeSGs(q)
	case "DescribeImages":
		return r.describeImages(q)
	case "CreateTags":
		return r.createTags(q)
	}
	return "", errf("InvalidAction", "The action %s is not valid for this web service (the simulated region serves what elasticity uses).", action)
}

// list reads prefix.1, prefix.2 ... until the first missing one.
func list(q url.Values, prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := q[prefix+"."+strconv.Itoa(i)]
		if !ok {
			return out
		}
		out = append(out, v[0])
	}
}

func tagsOf(q url.Values, prefix string) map[string]string {
	tags := map[string]string{}
	for i := 1; ; i++ {
		k, ok := q[fmt.Sprintf("%sTag.%d.Key", prefix, i)]
		if !ok {
			return tags
		}
		tags[k[0]] = q.Get(fmt.Sprintf("%sTag.%d.Value", prefix, i))
	}
}

// tagSpecs returns the tags of TagSpecification.N for a resource type.
func tagSpecs(q url.Values, resourceType string) map[string]string {
	out := map[string]string{}
	for i := 1; ; i++ {
		p := fmt.Sprintf("TagSpecification.%d.", i)
		rt, ok := q[p+"ResourceType"]
		if !ok {
			return out
		}
		if rt[0] == resourceType {
			for k, v := range tagsOf(q, p) {
				out[k] = v
			}
		}
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

// filters are the Filter.N.Name / Filter.N.Value.M pairs.
type filter struct {
	name   string
	values []string
}

func filtersOf(q url.Values) []filter {
	var out []filter
	for i := 1; ; i++ {
		p := fmt.Sprintf("Filter.%d.", i)
		n, ok := q[p+"Name"]
		if !ok {
			return out
		}
		out = append(out, filter{name: n[0], values: list(q, p+"Value")})
	}
}

// match is true when any of the filter's values matches v (values are ORed,
// EC2 API Filter), with EC2's wildcards.
func (f filter) match(v string) bool {
	for _, want := range f.values {
		if wildcardMatch(want, v) {
			return true
		}
	}
	return false
}

func (f filter) matchTags(tags map[string]string) (bool, bool) {
	if strings.HasPrefix(f.name, "tag:") {
		v, ok := tags[strings.TrimPrefix(f.name, "tag:")]
		return ok && f.match(v), true
	}
	if f.name == "tag-key" {
		for k := range tags {
			if f.match(k) {
				return true, true
			}
		}
		return false, true
	}
	return false, false
}

func (r *Region) runInstances(q url.Values) (string, *apiError) {
	if tok := q.Get("ClientToken"); tok != "" {
		// Idempotent retry: the same token returns the same instance.
		for _, id := range r.order {
			if in := r.instances[id]; in.clientToken == tok {
				return r.reservationXML(in), nil
			}
		}
	}
	img := r.image(q.Get("ImageId"))
	if img == nil {
		return "", errf("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", q.Get("ImageId"))
	}
	typ := q.Get("InstanceType")
	it, err := provision.LookupInstanceType(typ)
	if err != nil {
		return "", errf("InvalidParameterValue", "Invalid value '%s' for InstanceType.", typ)
	}
	if arch := provision.Architecture(typ); arch != img.Arch {
		return "", errf("InvalidParameterValue", "The architecture '%s' of the specified instance type does not match the architecture '%s' of the specified AMI. Specify an instance type and an AMI that have matching architectures, and try again.", arch, img.Arch)
	}
	if n, _ := strconv.Atoi(q.Get("MinCount")); n != 1 {
		return "", errf("InvalidParameterValue", "the simulated region launches one instance per RunInstances (MinCount=%s)", q.Get("MinCount"))
	}
	if sub := q.Get("SubnetId"); sub != "" {
		return "", errf("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist (the simulated region has only the default VPC)", sub)
	}
	az := q.Get("Placement.AvailabilityZone")
	if az == "" {
		az = r.o.Region + "a"
	}
	if !r.validZone(az) {
		return "", errf("InvalidParameterValue", "Invalid availability zone: [%s]", az)
	}
	sgs := list(q, "SecurityGroupId")
	for _, g := range sgs {
		if r.sgs[g] == nil {
			return "", errf("InvalidGroup.NotFound", "The security group '%s' does not exist", g)
		}
	}
	spot := q.Get("InstanceMarketOptions.MarketType") == "spot"
	if spot && r.refuseSpot {
		return "", errf("InsufficientInstanceCapacity", "There is no Spot capacity available that matches your request.")
	}
	if len(r.instances) >= r.o.MaxInstances {
		return "", errf("InstanceLimitExceeded", "You have requested more instances (%d) than your current instance limit of %d allows.", len(r.instances)+1, r.o.MaxInstances)
	}
	n, aerr := r.freeAddress()
	if aerr != nil {
		return "", aerr
	}
	ud := q.Get("UserData")
	r.nextID++
	r.nextAddr = n
	in := &instance{
		id: fmt.Sprintf("i-%017x", 0x5e0000+r.nextID), typ: it, az: az, image: img, state: statePending,
		private: fmt.Sprintf("%s%d", r.o.PrivateNet, n), public: fmt.Sprintf("%s%d", r.o.PublicNet, n),
		loopback: fmt.Sprintf("%s%d", r.o.LoopbackNet, n),
		userData: ud, tags: tagSpecs(q, "instance"), sgs: sgs, spot: spot, clientToken: q.Get("ClientToken"),
		launched: time.Now().UTC(), region: r,
	}
	in.injected = r.injectedImpairment(len(r.order) + 1)
	in.volumeTags = tagSpecs(q, "volume")
	if k := q.Get("KeyName"); k != "" {
		in.keyName = k
	}
	r.instances[in.id] = in
	r.order = append(r.order, in.id)
	r.logf("RunInstances %s %s in %s: private %s, public %s", in.id, typ, az, in.private, in.public)
	go in.boot()
	return r.reservationXML(in), nil
}

// validZone: zones a-f of the region, as EC2 names them.
func (r *Region) validZone(az string) bool {
	return len(az) == len(r.o.Region)+1 && strings.HasPrefix(az, r.o.Region) && az[len(az)-1] >= 'a' && az[len(az)-1] <= 'f'
}

func (r *Region) reservationXML(in *instance) string {
	return fmt.Sprintf("<reservationId>r-%s</reservationId><ownerId>%s</ownerId><groupSet/><instancesSet>%s</instancesSet>", in.id[2:], AccountID, r.instanceXML(in))
}

var stateCodes = map[string]int{statePending: 0, stateRunning: 16, stateShuttingDown: 32, stateTerminated: 48, stateStopping: 64, stateStopped: 80}

func (r *Region) instanceXML(in *instance) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<item><instanceId>%s</instanceId><imageId>%s</imageId><instanceState><code>%d</code><name>%s</name></instanceState>",
		in.id, in.image.ID, stateCodes[in.state], in.state)
	fmt.Fprintf(&b, "<privateDnsName>ip-%s.ec2.internal</privateDnsName><instanceType>%s</instanceType><launchTime>%s</launchTime>",
		strings.ReplaceAll(in.private, ".", "-"), in.typ.Name, in.launched.Format(time.RFC3339))
	fmt.Fprintf(&b, "<placement><availabilityZone>%s</availabilityZone><tenancy>default</tenancy></placement>", in.az)
	if in.state != stateTerminated {
		fmt.Fprintf(&b, "<privateIpAddress>%s</privateIpAddress>", in.private)
	}
	if in.state == stateRunning {
		// A public address is assigned while the instance runs (and released when it stops).
		fmt.Fprintf(&b, "<ipAddress>%s</ipAddress>", in.public)
	}
	if in.keyName != "" {
		fmt.Fprintf(&b, "<keyName>%s</keyName>", html.EscapeString(in.keyName))
	}
	b.WriteString("<groupSet>")
	for _, g := range in.sgs {
		name := ""
		if sg := r.sgs[g]; sg != nil {
			name = sg.name
		}
		fmt.Fprintf(&b, "<item><groupId>%s</groupId><groupName>%s</groupName></item>", g, html.EscapeString(name))
	}
	b.WriteString("</groupSet>")
	fmt.Fprintf(&b, "<architecture>%s</architecture>", in.image.Arch)
	if in.spot {
		b.WriteString("<instanceLifecycle>spot</instanceLifecycle>")
	}
	if in.reason != "" {
		fmt.Fprintf(&b, "<stateReason><code>%s</code><message>%s</message></stateReason>", html.EscapeString(in.reasonCode), html.EscapeString(in.reason))
	}
	b.WriteString(tagSetXML(in.tags))
	b.WriteString("</item>")
	return b.String()
}

// selectInstances applies InstanceId.N and the filters; unknown ids fail as EC2 does.
func (r *Region) selectInstances(q url.Values) ([]*instance, *apiError) {
	ids := list(q, "InstanceId")
	want := map[string]bool{}
	for _, id := range ids {
		if r.instances[id] == nil {
			return nil, errf("InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id)
		}
		want[id] = true
	}
	fs := filtersOf(q)
	var out []*instance
	for _, id := range r.order {
		in := r.instances[id]
		if len(want) > 0 && !want[id] {
			continue
		}
		ok := true
		for _, f := range fs {
			if m, isTag := f.matchTags(in.tags); isTag {
				ok = ok && m
				continue
			}
			switch f.name {
			case "instance-state-name":
				ok = ok && f.match(in.state)
			case "availability-zone":
				ok = ok && f.match(in.az)
			case "instance-type":
				ok = ok && f.match(in.typ.Name)
			case "instance-id":
				ok = ok && f.match(in.id)
			default:
				return nil, errf("InvalidParameterValue", "The filter '%s' is invalid (not served by the simulated region)", f.name)
			}
		}
		if ok {
			out = append(out, in)
		}
	}
	return out, nil
}

func (r *Region) describeInstances(q url.Values) (string, *apiError) {
	sel, err := r.selectInstances(q)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("<reservationSet>")
	for _, in := range sel {
		fmt.Fprintf(&b, "<item><reservationId>r-%s</reservationId><ownerId>%s</ownerId><groupSet/><instancesSet>%s</instancesSet></item>", in.id[2:], AccountID, r.instanceXML(in))
	}
	b.WriteString("</reservationSet>")
	return b.String(), nil
}

// describeStatus: running instances only (IncludeAllInstances is not
// used); both checks pass once the instance has booted (sshd is up, and
// scylla-server holds its addresses), and are impaired when its boot
// failed (the reason is the instance's stateReason).
func (r *Region) describeStatus(q url.Values) (string, *apiError) {
	sel, err := r.selectInstances(q)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("<instanceStatusSet>")
	for _, in := range sel {
		if in.state != stateRunning {
			continue
		}
		st := "initializing"
		if in.booted {
			st = "ok"
		}
		if in.impaired {
			st = "impaired"
		}
		fmt.Fprintf(&b, "<item><instanceId>%s</instanceId><availabilityZone>%s</availabilityZone><instanceState><code>16</code><name>running</name></instanceState>"+
			"<systemStatus><status>%s</status></systemStatus><instanceStatus><status>%s</status></instanceStatus></item>", in.id, in.az, st, st)
	}
	b.WriteString("</instanceStatusSet>")
	return b.String(), nil
}

func (r *Region) changeState(q url.Values, how string) (string, *apiError) {
	ids := list(q, "InstanceId")
	if len(ids) == 0 {
		return "", errf("MissingParameter", "The request must contain the parameter InstanceId")
	}
	for _, id := range ids {
		if r.instances[id] == nil {
			return "", errf("InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id)
		}
	}
	var b strings.Builder
	b.WriteString("<instancesSet>")
	for _, id := range ids {
		in := r.instances[id]
		prev := in.state
		switch how {
		case "terminate":
			if in.state != stateTerminated {
				in.state = stateShuttingDown
				go in.shutdown(false, stateTerminated)
			}
		default:
			if in.state == stateRunning || in.state == statePending {
				in.state = stateStopping
				go in.shutdown(how == "kill", stateStopped)
			}
		}
		fmt.Fprintf(&b, "<item><instanceId>%s</instanceId><currentState><code>%d</code><name>%s</name></currentState><previousState><code>%d</code><name>%s</name></previousState></item>",
			id, stateCodes[in.state], in.state, stateCodes[prev], prev)
	}
	b.WriteString("</instancesSet>")
	return b.String(), nil
}

func (r *Region) createSG(q url.Values) (string, *apiError) {
	name := q.Get("GroupName")
	if name == "" || q.Get("GroupDescription") == "" {
		return "", errf("MissingParameter", "The request must contain the parameters GroupName and GroupDescription")
	}
	for _, g := range r.sgs {
		if g.name == name {
			return "", errf("InvalidGroup.Duplicate", "The security group '%s' already exists for VPC 'vpc-sim'", name)
		}
	}
	r.nextID++
	g := &secGroup{id: fmt.Sprintf("sg-%017x", 0x5e0000+r.nextID), name: name, desc: q.Get("GroupDescription"), tags: tagSpecs(q, "security-group")}
	r.sgs[g.id] = g
	return fmt.Sprintf("<return>true</return><groupId>%s</groupId>", g.id), nil
}

func (r *Region) authorize(q url.Values) (string, *apiError) {
	g := r.sgs[q.Get("GroupId")]
	if g == nil {
		return "", errf("InvalidGroup.NotFound", "The security group '%s' does not exist", q.Get("GroupId"))
	}
	for i := 1; ; i++ {
		p := fmt.Sprintf("IpPermissions.%d.", i)
		proto, ok := q[p+"IpProtocol"]
		if !ok {
			break
		}
		rule := sgRule{proto: proto[0]}
		rule.from, _ = strconv.Atoi(q.Get(p + "FromPort"))
		rule.to, _ = strconv.Atoi(q.Get(p + "ToPort"))
		for j := 1; ; j++ {
			c, ok := q[fmt.Sprintf("%sIpRanges.%d.CidrIp", p, j)]
			if !ok {
				break
			}
			_, n, err := net.ParseCIDR(c[0])
			if err != nil {
				return "", errf("InvalidParameterValue", "CIDR block %s is malformed", c[0])
			}
			rule.cidrs = append(rule.cidrs, n)
		}
		for j := 1; ; j++ {
			gid, ok := q[fmt.Sprintf("%sGroups.%d.GroupId", p, j)]
			if !ok {
				break
			}
			rule.groups = append(rule.groups, gid[0])
		}
		g.rules = append(g.rules, rule)
	}
	// Instances of the group forward what the rules now open.
	for _, in := range r.instances {
		for _, id := range in.sgs {
			if id == g.id {
				go in.syncForwards()
			}
		}
	}
	return "<return>true</return>", nil
}

func (r *Region) deleteSG(q url.Values) (string, *apiError) {
	id := q.Get("GroupId")
	if r.sgs[id] == nil {
		return "", errf("InvalidGroup.NotFound", "The security group '%s' does not exist", id)
	}
	for _, in := range r.instances {
		if in.state == stateTerminated {
			continue
		}
		for _, g := range in.sgs {
			if g == id {
				return "", errf("DependencyViolation", "resource %s has a dependent object", id)
			}
		}
	}
	delete(r.sgs, id)
	return "<return>true</return>", nil
}

func (r *Region) describeSGs(q url.Values) (string, *apiError) {
	ids := list(q, "GroupId")
	fs := filtersOf(q)
	keys := make([]string, 0, len(r.sgs))
	for id := range r.sgs {
		keys = append(keys, id)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("<securityGroupInfo>")
	for _, id := range keys {
		g := r.sgs[id]
		if len(ids) > 0 && !contains(ids, id) {
			continue
		}
		ok := true
		for _, f := range fs {
			if m, isTag := f.matchTags(g.tags); isTag {
				ok = ok && m
			} else if f.name == "group-name" {
				ok = ok && f.match(g.name)
			} else {
				return "", errf("InvalidParameterValue", "The filter '%s' is invalid (not served by the simulated region)", f.name)
			}
		}
		if ok {
			fmt.Fprintf(&b, "<item><ownerId>%s</ownerId><groupId>%s</groupId><groupName>%s</groupName><groupDescription>%s</groupDescription><vpcId>vpc-sim</vpcId>%s</item>",
				AccountID, g.id, html.EscapeString(g.name), html.EscapeString(g.desc), tagSetXML(g.tags))
		}
	}
	b.WriteString("</securityGroupInfo>")
	return b.String(), nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// describeImages serves DescribeImages as EC2 does for the parameters the
// SDK sends (aws-sdk-go-v2 service/ec2 api_op_DescribeImages.go): Owner.N
// scopes to those accounts ("self" is the caller's), filters are ANDed and a
// filter's values ORed, tag:<key> matches that tag's value and tag-key a
// key, all with EC2's wildcards. A filter the region does not serve is
// refused rather than ignored, so a lookup never silently widens.
func (r *Region) describeImages(q url.Values) (string, *apiError) {
	owners := list(q, "Owner")
	for i, o := range owners {
		if o == "self" {
			owners[i] = AccountID
		}
	}
	fs := filtersOf(q)
	var b strings.Builder
	b.WriteString("<imagesSet>")
	for _, im := range r.images {
		if len(owners) > 0 && !contains(owners, im.Owner) {
			continue
		}
		ok, err := imageMatches(im, fs)
		if err != nil {
			return "", err
		}
		if ok {
			fmt.Fprintf(&b, "<item><imageId>%s</imageId><imageOwnerId>%s</imageOwnerId><name>%s</name><description>%s</description><imageState>available</imageState><isPublic>true</isPublic><architecture>%s</architecture><creationDate>%s</creationDate><rootDeviceType>ebs</rootDeviceType><virtualizationType>hvm</virtualizationType>%s</item>",
				im.ID, im.Owner, html.EscapeString(im.Name), html.EscapeString(im.Description), im.Arch, im.Created, tagSetXML(im.Tags))
		}
	}
	b.WriteString("</imagesSet>")
	return b.String(), nil
}

// imageMatches applies every filter to an image.
func imageMatches(im Image, fs []filter) (bool, *apiError) {
	for _, f := range fs {
		if ok, isTag := f.matchTags(im.Tags); isTag {
			if !ok {
				return false, nil
			}
			continue
		}
		var v string
		switch f.name {
		case "name":
			v = im.Name
		case "description":
			v = im.Description
		case "architecture":
			v = im.Arch
		case "image-id":
			v = im.ID
		case "owner-id":
			v = im.Owner
		case "state":
			v = "available"
		case "is-public":
			v = "true"
		default:
			return false, errf("InvalidParameterValue", "The filter '%s' is invalid (not served by the simulated region)", f.name)
		}
		if !f.match(v) {
			return false, nil
		}
	}
	return true, nil
}

func (r *Region) createTags(q url.Values) (string, *apiError) {
	ids := list(q, "ResourceId")
	tags := tagsOf(q, "")
	for _, id := range ids {
		switch {
		case r.instances[id] != nil:
			for k, v := range tags {
				r.instances[id].tags[k] = v
			}
		case r.sgs[id] != nil:
			for k, v := range tags {
				r.sgs[id].tags[k] = v
			}
		default:
			return "", errf("InvalidID", "The ID '%s' is not valid", id)
		}
	}
	return "<return>true</return>", nil
}
