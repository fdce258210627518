package provision

import (
	"fmt"
	"sort"
	"strings"
)

// InstanceType is one entry of the instance catalog. Figures are AWS's
// published vCPUs, memory and local NVMe size.
type InstanceType struct {
	Name      string  `json:"name"`
	VCPUs     int     `json:"vcpus"`
	MemoryGB  float64 `json:"memory_gb"`
	StorageGB float64 `json:"storage_gb"`
	// HourlyUSD is an approximate on-demand price in us-east-1, for plan estimates.
	HourlyUSD float64 `json:"hourly_usd"`
}

var catalog = map[string]InstanceType{}

func add(name string, vcpus int, mem, storage, usd float64) {
	catalog[name] = InstanceType{Name: name, VCPUs: vcpus, MemoryGB: mem, StorageGB: storage, HourlyUSD: usd}
}

func init() {
	add("i4i.large", 2, 16, 468, 0.172)
	add("i4i.xlarge", 4, 32, 937, 0.343)
	add("i4i.2xlarge", 8, 64, 1875, 0.686)
	add("i4i.4xlarge", 16, 128, 3750, 1.373)
	add("i4i.8xlarge", 32, 256, 7500, 2.746)
	add("i4i.16xlarge", 64, 512, 15000, 5.491)
	add("i7i.large", 2, 16, 468, 0.189)
	add("i7i.xlarge", 4, 32, 937, 0.378)
	add("i7i.2xlarge", 8, 64, 1875, 0.756)
	add("i7i.4xlarge", 16, 128, 3750, 1.511)
	add("i8g.large", 2, 16, 468, 0.172)
	add("i8g.xlarge", 4, 32, 937, 0.343)
	add("i8g.2xlarge", 8, 64, 1875, 0.686)
	add("i8g.4xlarge", 16, 128, 3750, 1.373)
	// Loader machines (no local NVMe): not valid as database nodes.
	add("c6i.xlarge", 4, 8, 0, 0.17)
	add("c6i.2xlarge", 8, 16, 0, 0.34)
	add("c6i.4xlarge", 16, 32, 0, 0.68)
	add("c7i.2xlarge", 8, 16, 0, 0.357)
	add("m6i.2xlarge", 8, 32, 0, 0.384)
}

// LookupInstanceType returns the catalog entry for name, or an error listing the known types.
func LookupInstanceType(name string) (InstanceType, error) {
	if it, ok := catalog[name]; ok {
		return it, nil
	}
	return InstanceType{}, fmt.Errorf("unknown instance type %q (known: %s)", name, strings.Join(InstanceTypeNames(), ", "))
}

// InstanceTypeNames lists the catalog, sorted.
func InstanceTypeNames() []string {
	names := make([]string, 0, len(catalog))
	for n := range catalog {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Architecture is the CPU architecture of an EC2 instance type, as an AMI
// names it: "arm64" for Graviton families (a "g" after the generation
// digit: i8g, c7g, m7gd, im4gn, is4gen), else "x86_64".
func Architecture(name string) string {
	family, _, _ := strings.Cut(name, ".")
	i := strings.IndexAny(family, "0123456789")
	if i >= 0 && strings.Contains(family[i+1:], "g") {
		return "arm64"
	}
	return "x86_64"
}
