package cql

import (
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// register records the event types a client wants and starts forwarding
// backend events to it (once per connection).
func (c *conn) register(version primitive.ProtocolVersion, types []primitive.EventType) {
	c.mu.Lock()
	for _, t := range types {
		c.registered[t] = true
	}
	start := !c.subscribed
	c.subscribed = true
	c.mu.Unlock()
	if !start {
		return
	}
	ch, cancel := c.s.b.Subscribe()
	go func() {
		defer cancel()
		defer func() {
			if r := recover(); r != nil {
				c.s.logf("ERROR", "panic while forwarding events to %s: %v", c.nc.RemoteAddr(), r)
				c.close()
			}
		}()
		for {
			select {
			case <-c.ctx.Done():
				return
			case ev, ok := <-ch:
				if !ok {
					return
				}
				t, msg := eventMessage(ev)
				if msg == nil {
					continue
				}
				c.mu.Lock()
				want := c.registered[t]
				c.mu.Unlock()
				if want {
					c.send(version, eventStream, msg)
				}
			}
		}
	}()
}

func eventMessage(ev engine.Event) (primitive.EventType, message.Message) {
	addr := &primitive.Inet{Addr: ev.Addr, Port: int32(ev.Port)}
	switch ev.Kind {
	case engine.TopologyNewNode:
		return primitive.EventTypeTopologyChange, &message.TopologyChangeEvent{ChangeType: primitive.TopologyChangeTypeNewNode, Address: addr}
	case engine.TopologyRemovedNode:
		return primitive.EventTypeTopologyChange, &message.TopologyChangeEvent{ChangeType: primitive.TopologyChangeTypeRemovedNode, Address: addr}
	case engine.StatusUp:
		return primitive.EventTypeStatusChange, &message.StatusChangeEvent{ChangeType: primitive.StatusChangeTypeUp, Address: addr}
	case engine.StatusDown:
		return primitive.EventTypeStatusChange, &message.StatusChangeEvent{ChangeType: primitive.StatusChangeTypeDown, Address: addr}
	case engine.SchemaChanged:
		if ev.Change == nil {
			return "", nil
		}
		ct, target, ks, obj := schemaChangeParts(*ev.Change)
		if ks == "" {
			return "", nil
		}
		return primitive.EventTypeSchemaChange, &message.SchemaChangeEvent{ChangeType: ct, Target: target, Keyspace: ks, Object: obj, Arguments: schemaChangeArgs(*ev.Change)}
	}
	return "", nil
}

// schemaChangeParts describes a schema change the way SCHEMA_CHANGE results
// and events do.
func schemaChangeParts(ch engine.SchemaChange) (primitive.SchemaChangeType, primitive.SchemaChangeTarget, string, string) {
	switch ch.Kind {
	case engine.CreateKeyspace:
		ks := ch.KeyspaceName
		if ch.Keyspace != nil {
			ks = ch.Keyspace.Name
		}
		return primitive.SchemaChangeTypeCreated, primitive.SchemaChangeTargetKeyspace, ks, ""
	case engine.DropKeyspace:
		return primitive.SchemaChangeTypeDropped, primitive.SchemaChangeTargetKeyspace, ch.KeyspaceName, ""
	case engine.CreateTable:
		ks, t := ch.KeyspaceName, ""
		if ch.Table != nil {
			if ks == "" {
				ks = ch.Table.Keyspace
			}
			t = ch.Table.Name
		}
		return primitive.SchemaChangeTypeCreated, primitive.SchemaChangeTargetTable, ks, t
	case engine.DropTable:
		return primitive.SchemaChangeTypeDropped, primitive.SchemaChangeTargetTable, ch.KeyspaceName, ch.TableName
	case engine.AlterTable:
		return primitive.SchemaChangeTypeUpdated, primitive.SchemaChangeTargetTable, ch.KeyspaceName, ch.TableName
	case engine.AlterKeyspace:
		return primitive.SchemaChangeTypeUpdated, primitive.SchemaChangeTargetKeyspace, ch.KeyspaceName, ""
	case engine.CreateType:
		return primitive.SchemaChangeTypeCreated, primitive.SchemaChangeTargetType, ch.KeyspaceName, ch.TableName
	case engine.DropType:
		return primitive.SchemaChangeTypeDropped, primitive.SchemaChangeTargetType, ch.KeyspaceName, ch.TableName
	case engine.CreateFunction, engine.DropFunction:
		// cql3/statements/function_statement.cc create_schema_change.
		ct, target := primitive.SchemaChangeTypeCreated, primitive.SchemaChangeTargetFunction
		if ch.Kind == engine.DropFunction {
			ct = primitive.SchemaChangeTypeDropped
		}
		if ch.Function.Aggregate {
			target = primitive.SchemaChangeTargetAggregate
		}
		return ct, target, ch.KeyspaceName, ch.Function.Name
	}
	return "", "", "", ""
}

// schemaChangeArgs are a FUNCTION or AGGREGATE change's argument types
// (function_statement.cc create_schema_change); nil for other changes.
func schemaChangeArgs(ch engine.SchemaChange) []string {
	if ch.Function == nil {
		return nil
	}
	return append([]string{}, ch.Function.ArgTypes...)
}
