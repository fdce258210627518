package scenarios

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/elasticity-dev/elasticity/provision"
)

// validateBackends checks the backends' sections.
func (s *Scenario) validateBackends() []error {
	var errs checks
	errs = append(errs, s.validateLocal()...)
	errs = append(errs, s.validateDocker()...)
	errs = append(errs, s.validateAWS()...)
	errs = append(errs, s.validateStatic()...)
	return errs
}

// validateLocal checks the local section.
func (s *Scenario) validateLocal() []error {
	var errs checks
	l := s.Local
	errs.positive("local.storage_scale_mib_per_gb", l.StorageScaleMiBPerGB)
	errs.positive("local.ops_per_vcpu", l.OpsPerVCPU)
	errs.positive("local.stream_mib_per_vcpu", l.StreamMiBPerVCPU)
	if l.TimeScale <= 0 || l.TimeScale > 1 {
		errs.add("local.time_scale", "must be in (0, 1], got %v", l.TimeScale)
	}
	if ip := net.ParseIP(l.BaseAddress); ip == nil || ip.To4() == nil {
		errs.add("local.base_address", "%q is not an IPv4 address", l.BaseAddress)
	} else if s.Backend == BackendLocal && !ip.IsLoopback() {
		errs.add("local.base_address", "%q is not a loopback address (127.0.0.0/8)", l.BaseAddress)
	}
	if s.Backend == BackendLocal {
		if err := provision.CheckLocalDataDir(l.DataDir); err != nil {
			errs.add("local.data_dir", "%v", err)
		}
	}
	if l.Loaders < 0 || l.Loaders > 64 {
		errs.add("local.loaders", "must be within 0..64")
	}
	if l.BlockedReactorNotifyMS < 1 {
		errs.add("local.blocked_reactor_notify_ms", "must be >= 1")
	}
	return errs
}

// validateDocker checks the docker section.
func (s *Scenario) validateDocker() []error {
	var errs checks
	if s.Docker.SMP < 1 {
		errs.add("docker.smp", "must be >= 1")
	}
	if s.Docker.Memory < 256<<20 {
		errs.add("docker.memory", "%s is less than 256MiB", s.Docker.Memory)
	}
	if s.Docker.StorageScaleMiBPerGB < 0 {
		errs.add("docker.storage_scale_mib_per_gb", "must be >= 0 (0: the image's default), got %v", s.Docker.StorageScaleMiBPerGB)
	}
	if s.Docker.TimeScale < 0 || s.Docker.TimeScale > 1 {
		errs.add("docker.time_scale", "must be in [0, 1] (0: the image's default), got %v", s.Docker.TimeScale)
	}
	if err := provision.CheckDockerDataMount(s.Docker.DataMount); err != nil {
		errs.add("docker.data_mount", "%v", err)
	}
	return errs
}

// validateAWS checks the aws section.
func (s *Scenario) validateAWS() []error {
	var errs checks
	if s.Backend == BackendAWS {
		a := s.AWS
		if a.Region == "" {
			errs.add("aws.region", "is required")
		}
		if len(a.AvailabilityZones) != len(s.Cluster.Racks) {
			errs.add("aws.availability_zones", "has %d zones for %d racks; give one zone per rack", len(a.AvailabilityZones), len(s.Cluster.Racks))
		}
		if a.LoaderCount < 0 {
			errs.add("aws.loader_count", "must be >= 0")
		}
		if _, err := provision.LookupInstanceType(a.LoaderInstanceType); err != nil && a.LoaderCount > 0 {
			errs.add("aws.loader_instance_type", "%v", err)
		}
		if a.LoaderCount > 0 && a.LoaderBinary != "" {
			if st, err := os.Stat(a.LoaderBinary); err != nil {
				errs.add("aws.loader_binary", "%v", err)
			} else if st.IsDir() || st.Mode()&0o111 == 0 {
				errs.add("aws.loader_binary", "%s is not an executable file", a.LoaderBinary)
			}
		}
		errs.positive("aws.ttl", float64(a.TTL))
	}
	return errs
}

// validateStatic checks the static section.
func (s *Scenario) validateStatic() []error {
	var errs checks
	if s.Backend == BackendStatic && len(s.Static.Hosts) == 0 {
		errs.add("static.hosts", "the static backend needs at least one host")
	}
	for i, h := range s.Static.Hosts {
		if strings.TrimSpace(h) == "" || strings.ContainsAny(h, " \t/") {
			errs.add(fmt.Sprintf("static.hosts.%d", i), "%q is not a host address", h)
		}
	}
	for _, c := range []struct {
		key string
		cmd *Command
	}{{"add_node", s.Static.AddNode}, {"remove_node", s.Static.RemoveNode}, {"stop_node", s.Static.StopNode}, {"kill_node", s.Static.KillNode}, {"start_node", s.Static.StartNode}} {
		if c.cmd == nil {
			continue
		}
		p := "static." + c.key
		if strings.TrimSpace(c.cmd.Command) == "" {
			errs.add(p+".command", "is required")
		}
		errs.positive(p+".timeout", float64(c.cmd.Timeout))
	}
	return errs
}
