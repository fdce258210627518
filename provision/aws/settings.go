package aws

import (
	"os"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/units"
)

// Settings is the scenario's aws section: EC2 instances of ScyllaDB's
// machine image. Racks map to availability zones.
type Settings struct {
	Region string `yaml:"region"`
	// AvailabilityZones, one per rack in rack order; empty = racks named after zones a, b, c of the region.
	AvailabilityZones []string `yaml:"availability_zones,omitempty"`
	// AMI of the database nodes; "" = looked up from cluster.version.
	AMI              string   `yaml:"ami,omitempty"`
	KeyPair          string   `yaml:"key_pair,omitempty"`
	SubnetIDs        []string `yaml:"subnet_ids,omitempty"`
	SecurityGroupIDs []string `yaml:"security_group_ids,omitempty"`
	// LoaderInstanceType and LoaderCount describe the load generator machines.
	LoaderInstanceType string `yaml:"loader_instance_type"`
	LoaderCount        int    `yaml:"loader_count"`
	// LoaderAMI is the loaders' image; "" = the database AMI (ScyllaDB's
	// images are Ubuntu hosts the ssh user can run programs on).
	LoaderAMI string `yaml:"loader_ami,omitempty"`
	// LoaderBinary is the elasticity executable copied to the loaders (a
	// Linux build for their architecture); "" = the running one, when the
	// runner itself is linux/amd64.
	LoaderBinary string `yaml:"loader_binary,omitempty"`
	// TTL lets gc remove resources of crashed runs after this long (every
	// backend's: their resources carry its keep-until).
	TTL  units.Duration    `yaml:"ttl"`
	Tags map[string]string `yaml:"tags,omitempty"`
	// RunnerCIDR opens a security group created for the run (no
	// security_group_ids given) to this address only, e.g. 203.0.113.7/32.
	RunnerCIDR string `yaml:"runner_cidr,omitempty"`
	// Spot tries spot instances first and falls back to on-demand.
	Spot bool `yaml:"spot,omitempty"`
	// PrivateIPs: the runner is inside the VPC and uses private addresses.
	PrivateIPs bool `yaml:"private_ips,omitempty"`
	// SSHUser and SSHKey are used to follow node logs (journalctl over ssh).
	SSHUser string `yaml:"ssh_user,omitempty"`
	SSHKey  string `yaml:"ssh_key,omitempty"`
}

// DefaultSettings are the aws section's defaults.
var DefaultSettings = Settings{Region: "us-east-1", LoaderInstanceType: "c6i.2xlarge", LoaderCount: 1, TTL: units.Duration(12 * time.Hour)}

// Default fills what the scenario left unset; an aws run's zones default
// to zones a, b, c... of the region, one per rack.
func (o *Settings) Default(s *provision.Section) {
	d := DefaultSettings
	if o.Region == "" {
		o.Region = d.Region
	}
	if o.LoaderInstanceType == "" {
		o.LoaderInstanceType = d.LoaderInstanceType
	}
	if !s.IsSet("loader_count") {
		o.LoaderCount = d.LoaderCount
	}
	if !s.IsSet("ttl") {
		o.TTL = d.TTL
	}
	if s.Selected && len(o.AvailabilityZones) == 0 && len(s.Racks) <= 26 {
		for i := range s.Racks {
			o.AvailabilityZones = append(o.AvailabilityZones, o.Region+string(rune('a'+i)))
		}
	}
}

// RackNames: an aws run's racks are its zones when cluster.racks is not given.
func (o *Settings) RackNames() []string { return append([]string(nil), o.AvailabilityZones...) }

// Validate checks an aws run's section.
func (o *Settings) Validate(s *provision.Section) {
	if !s.Selected {
		return
	}
	if o.Region == "" {
		s.Problem("region", "is required")
	}
	if len(o.AvailabilityZones) != len(s.Racks) {
		s.Problem("availability_zones", "has %d zones for %d racks; give one zone per rack", len(o.AvailabilityZones), len(s.Racks))
	}
	if o.LoaderCount < 0 {
		s.Problem("loader_count", "must be >= 0")
	}
	if _, err := provision.LookupInstanceType(o.LoaderInstanceType); err != nil && o.LoaderCount > 0 {
		s.Problem("loader_instance_type", "%v", err)
	}
	if o.LoaderCount > 0 && o.LoaderBinary != "" {
		if st, err := os.Stat(o.LoaderBinary); err != nil {
			s.Problem("loader_binary", "%v", err)
		} else if st.IsDir() || st.Mode()&0o111 == 0 {
			s.Problem("loader_binary", "%s is not an executable file", o.LoaderBinary)
		}
	}
	if o.TTL <= 0 {
		s.Problem("ttl", "must be > 0")
	}
}

// Configure gives every backend's resources aws.ttl as their keep-until;
// an aws run its tags, loader machines and how to reach them.
func (o *Settings) Configure(c *provision.Config, selected bool) {
	c.Cluster.TTL = o.TTL.D()
	if selected {
		c.Cluster.Labels = o.Tags
		c.Loaders = provision.LoaderSpec{Count: o.LoaderCount, InstanceType: o.LoaderInstanceType}
		c.RemoteLoaders = provision.RemoteLoaders{Binary: o.LoaderBinary, SSHUser: o.SSHUser, SSHKey: o.SSHKey}
	}
}

// settings is the aws section of a configuration.
func settings(c *provision.Config) *Settings {
	return provision.SettingsOf(c, func() *Settings {
		return &Settings{}
	})
}
