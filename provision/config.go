package provision

import "strconv"

// Config is the backend's part of a resolved plan: everything a backend is
// built from. The planner fills it in from the scenario's cluster and the
// backends' own sections (Options.Configure); backends never see the rest
// of the scenario.
type Config struct {
	Backend string
	// Env is the environment the plan was resolved in: what a backend reads
	// of it (the SDK's endpoint, a runner address) it reads here, never from
	// the process, so that resolving a plan is a function of the scenario
	// and this environment (as k6's GlobalState injects env).
	Env Env
	// Cluster is the initial cluster (Dir is set by the runner per run).
	Cluster ClusterSpec
	// Loaders are the load-generator machines or processes asked for (Count 0: none).
	Loaders LoaderSpec
	// RemoteLoaders is how remote loaders are reached and what they run.
	RemoteLoaders RemoteLoaders
	// Emulator is the emulated node's scale model (the local section's),
	// for local, for docker with the image double and a simulated EC2 region.
	Emulator EmulatorScale
	// NodeData is where the nodes keep their data, when it is on this
	// machine and the plan names it (local.data_dir).
	NodeData string
	// Options is the running backend's own section (its NewOptions type).
	Options Options
}

// RemoteLoaders: the elasticity executable copied to loader machines ("" =
// this one) and the ssh user and key that reach them.
type RemoteLoaders struct {
	Binary, SSHUser, SSHKey string
}

// Env looks an environment variable up ("" when unset).
type Env func(key string) string

// Get is the variable's value; a nil Env is an empty environment.
func (e Env) Get(key string) string {
	if e == nil {
		return ""
	}
	return e(key)
}

// EmulatorScale is how an emulated node scales the catalog down.
type EmulatorScale struct {
	StorageScaleMiBPerGB float64
	OpsPerVCPU           float64
	// CoordinatorOps is what the nodes charge for coordinating a request,
	// in replica operations (the nodes' --coordinator-units default).
	CoordinatorOps         float64
	StreamMiBPerVCPU       float64
	TimeScale              float64
	BlockedReactorNotifyMS int
}

// NodeArgs are the `elasticity node` flags of the scale model.
func (e EmulatorScale) NodeArgs() []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return []string{"--storage-scale-mib-per-gb", f(e.StorageScaleMiBPerGB), "--ops-per-vcpu", f(e.OpsPerVCPU),
		"--stream-mib-per-vcpu", f(e.StreamMiBPerVCPU), "--blocked-reactor-notify-ms", strconv.Itoa(e.BlockedReactorNotifyMS),
		"--time-scale", f(timeScale(e.TimeScale))}
}

// timeScale is 1 for an unset scale.
func timeScale(s float64) float64 {
	if s <= 0 {
		return 1
	}
	return s
}
