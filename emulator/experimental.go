package emulator

import (
	"fmt"
	"slices"
)

// experimentalFeatures are the names db/config.cc
// experimental_features_t::map accepts (most are no longer experimental
// and do nothing); only udf changes the emulator's behaviour.
var experimentalFeatures = []string{"lwt", "udf", "cdc", "alternator-streams", "alternator-ttl", "consistent-topology-changes",
	"broadcast-tables", "keyspace-storage-options", "tablets", "views-with-tablets", "strongly-consistent-tables", "logstor"}

// experimentalErrors checks --experimental-features and, as init.cc does,
// refuses --enable-user-defined-functions without the udf feature.
func experimentalErrors(c *Config) []string {
	var errs []string
	for _, f := range c.ExperimentalFeatures {
		if !slices.Contains(experimentalFeatures, f) {
			errs = append(errs, fmt.Sprintf("--experimental-features: invalid value %q", f))
		}
	}
	if c.EnableUDF && !slices.Contains(c.ExperimentalFeatures, "udf") {
		errs = append(errs, "You must use both enable_user_defined_functions and experimental_features:udf to enable user-defined functions")
	}
	return errs
}
