package aws

import (
	"fmt"
	"sort"

	"github.com/elasticity-dev/elasticity/provision"
)

// CostLine is one line of a plan's cost estimate.
type CostLine struct {
	InstanceType string  `json:"instance_type"`
	Count        int     `json:"count"`
	HourlyUSD    float64 `json:"hourly_usd"` // for all Count instances
}

// EstimateCost prices instances (type -> count) from the catalog's on-demand
// figures (us-east-1, approximate). Unknown types are an error.
func EstimateCost(counts map[string]int) ([]CostLine, float64, error) {
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	var lines []CostLine
	total := 0.0
	for _, n := range names {
		it, err := provision.LookupInstanceType(n)
		if err != nil {
			return nil, 0, fmt.Errorf("pricing: %w", err)
		}
		l := CostLine{InstanceType: n, Count: counts[n], HourlyUSD: it.HourlyUSD * float64(counts[n])}
		lines = append(lines, l)
		total += l.HourlyUSD
	}
	return lines, total, nil
}
