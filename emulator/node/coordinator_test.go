package node

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// A request costs its coordinator's shard CoordinatorUnits on top of the
// replica's own unit: on one shard of 100 units a second (10 ms each),
// ten writes and ten reads of RF=1 keep the shard busy 20 × (1 + units) ×
// 10 ms, whatever the machine does, since the model accounts in virtual
// time. The keyspace has one tablet.
func TestCoordinatingARequestCostsItsShard(t *testing.T) {
	for i, units := range []float64{0, 1, 0.5} {
		t.Run(fmt.Sprintf("units=%g", units), func(t *testing.T) {
			n := startTestNode(t, Config{DC: "dc1", Rack: "rack1", VCPUs: 1, InternodePort: 17916 + i, OpsPerVCPU: 100, CoordinatorUnits: units})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			createTableTablets(t, n, 0, 1, 1)
			time.Sleep(1100 * time.Millisecond) // the schema's own work leaves the utilization window
			for j := range 10 {
				key := []byte(fmt.Sprintf("key-%d", j))
				m := engine.Mutation{Keyspace: "ks", Table: "t", PartitionKey: key, Cells: map[string][]byte{"v": []byte("x")}, Timestamp: time.Now().UnixMicro()}
				if err := n.Write(ctx, []engine.Mutation{m}, engine.One); err != nil {
					t.Fatal(err)
				}
				if _, err := n.Read(ctx, engine.Read{Keyspace: "ks", Table: "t", PartitionKey: key}, engine.One); err != nil {
					t.Fatal(err)
				}
			}
			busy := n.cap.Utilization()[0] * 1000 // ms of the last second
			want := 20 * (1 + units) * 10
			if math.Abs(busy-want) > 10 {
				t.Errorf("the shard was busy %.0f ms for 10 writes and 10 reads at %g coordinator units, want %.0f", busy, units, want)
			}
		})
	}
}
