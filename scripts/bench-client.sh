#!/bin/bash
# The load generator's own cost against a do-nothing CQL server (nullcql from
# ../shared/tools, or $NULLCQL_SRC): ops per client CPU-second, server CPU per
# operation, peak RSS, and fixed-rate accuracy. `make bench-client` runs it.
#
# The server runs on CPU 1 and the client on CPU 0 (when there are two), as
# ../shared/tools/client-cost.sh does. CPU-seconds per operation are what to
# compare: wall-clock rates depend on what else runs on the machine. Compare
# two builds by running this for each, alternately, and taking medians.
#
# The client is `elasticity-loader stress` (what loader machines run);
# BENCH_CLIENT=elasticity measures `elasticity stress` (the whole runner's
# executable: same code path, ~3x the resident memory, see cmd/elasticity-loader).
#
# Environment: NULLCQL_SRC (default ../shared/tools/nullcql), BENCH_ADDR
# (default 127.0.18.1), BENCH_DURATION (default 10s), BENCH_VALUE (1024),
# BENCH_CLIENT (elasticity-loader or elasticity).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=${NULLCQL_SRC:-$root/../shared/tools/nullcql}
addr=${BENCH_ADDR:-127.0.18.1}
dur=${BENCH_DURATION:-10s}
value=${BENCH_VALUE:-1024}
client=${BENCH_CLIENT:-elasticity-loader}
case $client in
elasticity | elasticity-loader) ;;
*) echo "bench-client: BENCH_CLIENT must be elasticity or elasticity-loader" >&2; exit 2 ;;
esac
out=$root/build/bench
mkdir -p "$out"
if [ ! -f "$src/main.go" ]; then
	echo "bench-client: no nullcql source at $src (set NULLCQL_SRC)" >&2
	exit 2
fi
command -v python3 >/dev/null || { echo "bench-client: needs python3" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-client: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
(cd "$root" && go build -o "$out/$client" "./cmd/$client")
(cd "$src" && go build -o "$out/nullcql" .)

pin_srv=() pin_cli=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	pin_srv=(taskset -c 1) pin_cli=(taskset -c 0)
fi

srv_pid=
stop_server() {
	if [ -n "$srv_pid" ]; then
		kill "$srv_pid" 2>/dev/null || true
		wait "$srv_pid" 2>/dev/null || true
	fi
	srv_pid=
}
trap stop_server EXIT

# run LABEL STRESS_ARGS...: one generator run against a fresh nullcql.
run() {
	local label=$1
	shift
	# Something already answering there would be measured instead of nullcql.
	if (exec 3<>"/dev/tcp/$addr/9042") 2>/dev/null; then
		echo "bench-client: $addr:9042 is already in use by another process; set BENCH_ADDR to a free loopback address" >&2
		return 1
	fi
	"${pin_srv[@]}" "$out/nullcql" -addr "$addr:9042" -value-size "$value" >"$out/server.log" 2>&1 &
	srv_pid=$!
	sleep 0.5
	if ! kill -0 "$srv_pid" 2>/dev/null; then
		echo "bench-client: nullcql did not start on $addr:9042:" >&2
		tail -5 "$out/server.log" >&2
		srv_pid=
		return 1
	fi
	local c0 c1
	c0=$(awk '{print $14+$15}' "/proc/$srv_pid/stat")
	/usr/bin/time -v -o "$out/time.txt" "${pin_cli[@]}" "$out/$client" stress --hosts "$addr" \
		--duration "$dur" --keys 100000 --value-size "$value" --summary-json "$out/summary.json" "$@" \
		>"$out/client.txt" 2>&1 || { echo "$label: $client stress failed:" >&2; tail -5 "$out/client.txt" >&2; stop_server; return 1; }
	c1=$(awk '{print $14+$15}' "/proc/$srv_pid/stat")
	stop_server
	python3 - "$label" "$out/summary.json" "$out/time.txt" "$c0" "$c1" "$(getconf CLK_TCK)" <<'PY'
import json, sys
label, sj, tt, c0, c1, hz = sys.argv[1:]
s = json.load(open(sj))
t = {}
for line in open(tt):
    k, _, v = line.strip().rpartition(": ")
    t[k] = v
cpu = float(t["User time (seconds)"]) + float(t["System time (seconds)"])
rss = int(t["Maximum resident set size (kbytes)"]) / 1024
ops = s["succeeded"] + s["errors"]
srv = (int(c1) - int(c0)) / float(hz)
line = f"{label:<22} ops={ops:<8} ops/client-cpu-s={ops/max(cpu,1e-9):>7.0f}  server-cpu/op={1e6*srv/max(ops,1):6.2f}us  rss={rss:4.0f}MiB"
if s["target_rate"] > 0:
    err = 100 * (s["achieved_rate"] - s["target_rate"]) / s["target_rate"]
    p = {o["op"]: o["response"] for o in s["ops"]}
    p50 = max(v.get("p50_ms", 0) for v in p.values())
    p99 = max(v.get("p99_ms", 0) for v in p.values())
    line += f"  rate-error={err:+6.2f}%  dropped={s['dropped']}  late={s['late']}  response p50={p50:.2f}ms p99={p99:.2f}ms"
print(line, flush=True)
PY
}

echo "# $client stress against nullcql ($addr, ${value}-byte values, $dur per run; client CPU 0, server CPU 1)"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
run "closed write c64" --rate 0 --mix write=1 --concurrency 64
run "closed read c64" --rate 0 --mix read=1 --concurrency 64
for c in 64 1000; do
	for r in 100 1000 5000 50000; do
		[ "$r" = 100 ] && [ "$c" = 1000 ] && continue
		run "rate $r c$c" --rate "$r" --mix write=1,read=1 --concurrency "$c"
	done
done
