package stress

import (
	"net"
	"testing"
)

// The addresses a cluster reports for its nodes (system.peers) are mapped to
// the ones the client reaches them at; unknown ones are kept.
func TestSessionTranslatesReportedAddresses(t *testing.T) {
	m := map[string]string{"10.0.0.5": "203.0.113.5"}
	c, err := ClusterConfig(SessionConfig{Hosts: []string{"203.0.113.5"}, Translate: func(a string) string { return m[a] }})
	if err != nil {
		t.Fatal(err)
	}
	if c.AddressTranslator == nil {
		t.Fatal("no address translator")
	}
	if ip, port := c.AddressTranslator.Translate(net.ParseIP("10.0.0.5"), 9042); ip.String() != "203.0.113.5" || port != 9042 {
		t.Errorf("10.0.0.5:9042 → %s:%d", ip, port)
	}
	if ip, _ := c.AddressTranslator.Translate(net.ParseIP("10.0.0.9"), 9042); ip.String() != "10.0.0.9" {
		t.Errorf("unknown address changed to %s", ip)
	}
	if c, _ := ClusterConfig(SessionConfig{Hosts: []string{"h"}}); c.AddressTranslator != nil {
		t.Error("a translator without Translate")
	}
}
