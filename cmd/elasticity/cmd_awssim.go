package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/awssim"
	"github.com/elasticity-dev/elasticity/emulator"
	"github.com/elasticity-dev/elasticity/emulator/localcluster"
	"github.com/elasticity-dev/elasticity/provision"
)

func init() {
	addCommand(func(e *env) *cobra.Command {
		var o awssim.Options
		var envFile string
		// The instances' nodes run the emulator's default scale model at the
		// local backend's time scale (tests keep both equal to local's defaults).
		ec := emulator.DefaultConfig()
		l := provision.EmulatorScale{StorageScaleMiBPerGB: ec.StorageScaleMiBPerGB, OpsPerVCPU: ec.OpsPerVCPU, CoordinatorOps: ec.CoordinatorUnits,
			StreamMiBPerVCPU: ec.StreamMiBPerVCPU, BlockedReactorNotifyMS: ec.BlockedReactorNotifyMS, TimeScale: localcluster.DefaultTimeScale}
		cmd := &cobra.Command{
			Use:   "aws-sim",
			Short: "Serve a simulated EC2 region on loopback to rehearse `run --backend aws`",
			Long: `aws-sim serves a simulated EC2 region on this machine: the EC2 Query API subset
the aws backend uses, through the real AWS SDK, with instances that behave like
ScyllaDB machine-image instances (an emulated node configured from the user-data,
private 127.0.1.N and public 127.0.2.N addresses, only the security group's ports
forwarded, sshd with journalctl). Addresses another process listens on are
skipped; an instance whose scylla-server cannot start (its journal says why)
fails its status check instead of passing as started. It prints the environment to export as
"export NAME=value" lines on stdout and runs until interrupted, then terminates
every instance it still has.

  elasticity aws-sim > aws-sim.env &
  . ./aws-sim.env && elasticity run configs/smoke.yaml --backend aws`,
			Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				if o.Binary == "" {
					o.Binary = e.Executable
				}
				if o.Dir == "" {
					d, err := os.MkdirTemp("", "elasticity-aws-sim-")
					if err != nil {
						return withCode(ExitRunError, err)
					}
					o.Dir = d
				}
				o.NodeArgs = append(o.NodeArgs, l.NodeArgs()...)
				o.Logf = func(format string, args ...any) { fmt.Fprintf(e.Stderr, format+"\n", args...) }
				r, err := awssim.Start(c.Context(), o)
				if err != nil {
					return withCode(ExitRunError, err)
				}
				var b strings.Builder
				for _, kv := range r.Env() {
					k, v, _ := strings.Cut(kv, "=")
					fmt.Fprintf(&b, "export %s=%s\n", k, v)
				}
				fmt.Fprint(e.Stdout, b.String())
				if envFile != "" {
					tmp := envFile + ".tmp"
					if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err == nil {
						err = os.Rename(tmp, envFile)
					}
					if err != nil {
						r.Close()
						return withCode(ExitRunError, fmt.Errorf("writing %s: %w", envFile, err))
					}
				}
				fmt.Fprintf(e.Stderr, "aws-sim: instances under %s; Ctrl-C terminates them and stops the region\n", o.Dir)
				<-c.Context().Done()
				fmt.Fprintf(e.Stderr, "aws-sim: terminating %d live instance(s)\n", r.Live())
				if err := r.Close(); err != nil {
					return withCode(ExitRunError, err)
				}
				return nil
			},
		}
		fl := cmd.Flags()
		fl.StringVar(&o.Listen, "listen", "127.0.0.1:0", "address of the EC2 API")
		fl.StringVar(&o.Region, "region", "us-east-1", "region name (zones are <region>a..f)")
		fl.StringVar(&o.Dir, "dir", "", "instances' disks and logs (default: a new temporary directory)")
		fl.StringVar(&envFile, "env-file", "", "also write the export lines to this file")
		fl.BoolVar(&o.RefuseSpot, "refuse-spot", false, "answer spot launches with InsufficientInstanceCapacity")
		fl.IntVar(&o.MaxInstances, "max-instances", 64, "the account's instance limit")
		fl.StringSliceVar(&o.Versions, "versions", []string{"2025.1.0"}, "ScyllaDB versions with published images (x86_64 and arm64 each, named and tagged as ScyllaDB's; later ones newer)")
		fl.Float64Var(&l.StorageScaleMiBPerGB, "storage-scale-mib-per-gb", l.StorageScaleMiBPerGB, "emulated disk MiB per catalog GB (local.storage_scale_mib_per_gb)")
		fl.Float64Var(&l.OpsPerVCPU, "ops-per-vcpu", l.OpsPerVCPU, "replica operations per second per vCPU (local.ops_per_vcpu)")
		fl.Float64Var(&l.StreamMiBPerVCPU, "stream-mib-per-vcpu", l.StreamMiBPerVCPU, "streaming MiB/s per vCPU (local.stream_mib_per_vcpu)")
		return cmd
	})
}
