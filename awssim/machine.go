package awssim

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// machineConf is what the machine image makes of an instance's user-data
// (scylla-machine-image common/scylla_configure.py and lib/user_data.py).
type machineConf struct {
	clusterName string
	listen      string // listen_address: the private address
	broadcast   string // broadcast_rpc_address: the private address
	apiAddress  string // api_address as scylla.yaml has it
	seeds       []string
	snitch      string
	dc, rack    string
	start       bool // start_scylla_on_first_boot
	warnings    []string
}

// packagedAPIAddress is api_address in the scylla.yaml the image ships
// (scylladb conf/scylla.yaml); scylla_configure.py does not change it.
const packagedAPIAddress = "127.0.0.1"

// configure mirrors ScyllaMachineImageConfigurator.configure_scylla_yaml:
// the user-data's scylla_yaml keys win; listen_address and
// broadcast_rpc_address default to the private address, seeds to the
// instance itself, endpoint_snitch to Ec2Snitch on AWS; everything else
// keeps the packaged scylla.yaml's value. User-data that does not parse
// leaves the defaults, as lib/user_data.py does ("Will use defaults!").
// The user-data given here is already base64-decoded, as the instance
// metadata service serves it.
func configure(userData []byte, privateIP, zone string) machineConf {
	c := machineConf{clusterName: "", listen: privateIP, broadcast: privateIP, apiAddress: packagedAPIAddress,
		seeds: []string{privateIP}, snitch: "Ec2Snitch", start: true}
	var ud map[string]any
	if len(strings.TrimSpace(string(userData))) > 0 {
		if err := yaml.Unmarshal(userData, &ud); err != nil {
			c.warnings = append(c.warnings, fmt.Sprintf("Error getting user data: %v. Will use defaults!", err))
			ud = nil
		}
	}
	if v, ok := ud["start_scylla_on_first_boot"].(bool); ok {
		c.start = v
	}
	y, _ := ud["scylla_yaml"].(map[string]any)
	str := func(k string) (string, bool) {
		v, ok := y[k]
		if !ok {
			return "", false
		}
		return fmt.Sprint(v), true
	}
	if v, ok := str("cluster_name"); ok {
		c.clusterName = v
	}
	if v, ok := str("listen_address"); ok {
		c.listen = v
	}
	if v, ok := str("broadcast_rpc_address"); ok {
		c.broadcast = v
	}
	if v, ok := str("api_address"); ok {
		c.apiAddress = v
	}
	if v, ok := str("endpoint_snitch"); ok {
		c.snitch = v
	}
	if sp, ok := y["seed_provider"].([]any); ok && len(sp) > 0 {
		if m, ok := sp[0].(map[string]any); ok {
			if ps, ok := m["parameters"].([]any); ok && len(ps) > 0 {
				if p, ok := ps[0].(map[string]any); ok {
					if s, ok := p["seeds"].(string); ok {
						c.seeds = nil
						for _, a := range strings.Split(s, ",") {
							if a = strings.TrimSpace(a); a != "" {
								c.seeds = append(c.seeds, a)
							}
						}
					}
				}
			}
		}
	}
	c.dc, c.rack = snitchDCRack(c.snitch, zone)
	return c
}

// snitchDCRack names the DC and rack the way the snitch does.
//   - Ec2Snitch (scylladb locator/ec2_snitch.cc): split the zone at '-',
//     the rack is the last part ("1a"); the DC is the zone without its
//     letter, and without its "1" too when it ends in 1 (CASSANDRA-4026):
//     us-east-1a → us-east / 1a, us-west-2b → us-west-2 / 2b.
//   - GossipingPropertyFileSnitch: scylla_configure.py writes
//     cassandra-rackdc.properties with dc=<region> and rack=<zone>.
//   - SimpleSnitch: datacenter1 / rack1.
func snitchDCRack(snitch, zone string) (string, string) {
	short := snitch[strings.LastIndex(snitch, ".")+1:]
	switch short {
	case "Ec2Snitch", "Ec2MultiRegionSnitch":
		parts := strings.Split(zone, "-")
		rack := parts[len(parts)-1]
		dc := zone[:len(zone)-1]
		if strings.HasSuffix(dc, "1") {
			dc = zone[:len(zone)-3]
		}
		return dc, rack
	case "GossipingPropertyFileSnitch":
		return zone[:len(zone)-1], zone
	}
	return "datacenter1", "rack1"
}
