"""Static columns through the Python driver (Debian's python3-cassandra).

Usage: static_python.py HOST PORT. Creates a table with a static column,
writes two rows of one partition and one of another, each write setting the
static column, and prints what the driver reads back as JSON:
{"kind": <system_schema.columns kind of the static column>,
 "rows": [[p, c, s], ...]}. The Go test (pydriver_test.go) judges it.
"""
import json
import sys

from cassandra.cluster import Cluster


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    cluster = Cluster([host], port=port, connect_timeout=20)
    session = cluster.connect()
    session.default_timeout = 30
    session.execute("CREATE KEYSPACE IF NOT EXISTS pystatic WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE IF NOT EXISTS pystatic.t (p int, c int, s text STATIC, v int, PRIMARY KEY (p, c))")
    insert = session.prepare("INSERT INTO pystatic.t (p, c, s, v) VALUES (?, ?, ?, ?)")
    session.execute(insert, (1, 1, "first", 10))
    session.execute(insert, (1, 2, "second", 20))
    session.execute(insert, (2, 1, "other", 30))
    kind = session.execute("SELECT kind FROM system_schema.columns WHERE keyspace_name = 'pystatic' "
                           "AND table_name = 't' AND column_name = 's'").one().kind
    rows = [[r.p, r.c, r.s] for r in session.execute("SELECT p, c, s FROM pystatic.t")]
    print(json.dumps({"kind": kind, "rows": sorted(rows)}))
    cluster.shutdown()


if __name__ == "__main__":
    main()
