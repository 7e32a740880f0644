#!/usr/bin/env bash
# bench/run.sh — ratecheck vs vegeta (and wrk's maximum) against the same loopback sink,
# over http and https.
#
#   bench/run.sh            full run: 3 repetitions, plus the 1M-request memory run and the
#                           10M-result report runs (~12 min)
#   bench/run.sh --quick    1 repetition, no memory run (~4 min)
#
# Everything goes to 127.0.0.1 only; every run is bounded by its duration and
# by ratecheck's request/time budgets. See bench/README.md for what each
# figure means and the caveats (the tools and the sink share 2 cores; nothing
# is pinned).
#
# Environment:
#   BENCH_KEEP=1          keep the work directory (results files, raw reports)
#   BENCH_IDLE_WAIT=SECS  total time the script may spend waiting for other
#                         processes to stop using the CPU before a run (default 60)
set -euo pipefail

QUICK=0
for arg in "$@"; do
	case "$arg" in
	--quick) QUICK=1 ;;
	-h | --help)
		sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "run.sh: unknown argument $arg (try --help)" >&2
		exit 2
		;;
	esac
done

REPS=3
BURSTS=5 # bursts are cheap (about 1.5 s each), so always 5 even with --quick
if ((QUICK)); then REPS=1; fi
VEGETA_VERSION=v12.13.0

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d -t ratecheck-bench.XXXXXX)
SINK_PID=
cleanup() {
	if [[ -n $SINK_PID ]] && kill -0 "$SINK_PID" 2>/dev/null; then
		kill "$SINK_PID" 2>/dev/null || true
		wait "$SINK_PID" 2>/dev/null || true
	fi
	if [[ ${BENCH_KEEP:-0} == 1 ]]; then
		echo "work directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s  %s\n' "$(date +%H:%M:%S)" "$*"; }
die() {
	echo "run.sh: $*" >&2
	exit 1
}

# ---------------------------------------------------------------- tools
if [[ ! -x /usr/bin/time ]]; then
	log "installing GNU time (apt)"
	[[ $(id -u) == 0 ]] || die "/usr/bin/time is missing and we are not root: apt-get install time"
	apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi
command -v curl >/dev/null || die "curl is required (apt-get install curl)"
# wrk is the reference for maximum throughput (a C event loop, no pacing).
# Missing and not root: its rows are left empty, with a warning.
if ! command -v wrk >/dev/null; then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		log "installing wrk (apt)"
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null ||
			log "WARNING: installing wrk failed; its rows stay empty"
	else
		log "WARNING: wrk is not installed (apt-get install wrk); its rows stay empty"
	fi
fi
HAVE_WRK=0
if command -v wrk >/dev/null; then HAVE_WRK=1; fi

log "building ratecheck, sink, analyze"
(cd "$ROOT" && go build -o "$WORK/ratecheck" .) || die "building ratecheck failed"
(cd "$ROOT" && go build -o "$WORK/sink" ./bench/sink && go build -o "$WORK/analyze" ./bench/analyze && go build -o "$WORK/floor" ./bench/floor &&
	go build -o "$WORK/streamgen" ./bench/streamgen) ||
	die "building bench tools failed"
log "installing vegeta@$VEGETA_VERSION into a temp GOBIN"
(cd "$WORK" && GOBIN="$WORK/gobin" GOFLAGS=-buildvcs=false go install "github.com/tsenart/vegeta/v12@$VEGETA_VERSION") ||
	die "go install vegeta failed"
RC=$WORK/ratecheck
VG=$WORK/gobin/vegeta
AN=$WORK/analyze

# ---------------------------------------------------------------- sink
# One sink, two data listeners: plain http and https (a certificate for
# 127.0.0.1 made at start; both tools are given it to trust).
"$WORK/sink" -addr 127.0.0.1:0 -ctl 127.0.0.1:0 -tls-addr 127.0.0.1:0 -tls-cert-out "$WORK/sink.pem" \
	>"$WORK/sink.out" 2>"$WORK/sink.err" &
SINK_PID=$!
for _ in $(seq 50); do
	[[ $(wc -l <"$WORK/sink.out") -ge 3 ]] && break
	sleep 0.1
done
URL=$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$WORK/sink.out")
URL_TLS=$(sed -n 's/^listening on \(https:[^ ]*\)$/\1/p' "$WORK/sink.out")
CTL=$(sed -n 's/^control on http:\/\/\([^/]*\)\/$/http:\/\/\1/p' "$WORK/sink.out")
[[ -n $URL && -n $URL_TLS && -n $CTL ]] || die "sink did not start: $(cat "$WORK/sink.err")"
log "sink $URL and $URL_TLS (control $CTL), pid $SINK_PID"
echo "GET $URL" >"$WORK/targets-http.txt"
echo "GET $URL_TLS" >"$WORK/targets-https.txt"
SINK_START=$(curl -fsS "$CTL/info" | "$WORK/analyze" get start)

sink_reset() { curl -fsS -X POST "$CTL/reset" >/dev/null; }
sink_arrivals() { curl -fsS "$CTL/arrivals" >"$1"; }
sink_kernel_arrivals() { curl -fsS "$CTL/kernel-arrivals" >"$1"; }

# ---------------------------------------------------------------- CPU accounting
TCK=$(getconf CLK_TCK)
machine_busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }
proc_ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# wait_idle: wait (within the BENCH_IDLE_WAIT budget) until processes other
# than ours use less than 15% of one core, sampled over 1 s.
IDLE_BUDGET=${BENCH_IDLE_WAIT:-60}
top_other() { # busiest process right now (top's second sample), not ours
	top -bn2 -d0.3 2>/dev/null | awk -v sink="$SINK_PID" '/^top -/{n++} n==2 && $1~/^[0-9]+$/ && $1!=sink && $12!="top"{printf "%s %s%%", $12, $9; exit}'
}
CONTENDED=0
wait_idle() {
	local waited=0 b0 b1 s0 s1 other
	while :; do
		b0=$(machine_busy_ticks) s0=$(proc_ticks "$SINK_PID")
		sleep 1
		b1=$(machine_busy_ticks) s1=$(proc_ticks "$SINK_PID")
		other=$((b1 - b0 - (s1 - s0)))
		if ((other * 100 < 15 * TCK)); then return 0; fi
		if ((IDLE_BUDGET <= 0)); then
			log "WARNING: machine busy ($((other * 100 / TCK))% of a core used by other processes, top: $(top_other)); running anyway"
			CONTENDED=$((CONTENDED + 1))
			return 0
		fi
		if ((waited == 0)); then log "machine busy ($((other * 100 / TCK))% of a core used by other processes, top: $(top_other)): waiting"; fi
		waited=1
		IDLE_BUDGET=$((IDLE_BUDGET - 1))
	done
}

# timed NAME CMD...: run CMD with stdout/stderr in $WORK/NAME.{out,err} under
# GNU time; sets CPU_S (user+sys seconds), WALL_S, RSS_MB, OTHER_S (CPU
# seconds used during the run by processes other than the tool and the sink)
# and SINK_S.
timed() {
	local name=$1
	shift
	local b0 b1 s0 s1 rc=0
	b0=$(machine_busy_ticks) s0=$(proc_ticks "$SINK_PID")
	/usr/bin/time -f '%U %S %M %e' -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
	b1=$(machine_busy_ticks) s1=$(proc_ticks "$SINK_PID")
	if ((rc != 0)); then
		echo "--- $name failed (exit $rc): $*" >&2
		tail -5 "$WORK/$name.err" >&2
		return "$rc"
	fi
	read -r u s m WALL_S < <(tail -1 "$WORK/$name.time")
	CPU_S=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u+s}')
	RSS_MB=$(awk -v m="$m" 'BEGIN{printf "%.1f", m/1024}')
	SINK_S=$(awk -v t=$((s1 - s0)) -v k="$TCK" 'BEGIN{printf "%.2f", t/k}')
	OTHER_S=$(awk -v t=$((b1 - b0 - (s1 - s0))) -v k="$TCK" -v c="$CPU_S" 'BEGIN{o=t/k-c; if(o<0)o=0; printf "%.2f", o}')
}

# kv FILE KEY: value of KEY=... in an `analyze arrivals` output.
kv() { sed -n "s/^$2=//p" "$1"; }
# jget FILE PATH...: fields of a JSON report.
jget() {
	local f=$1
	shift
	"$AN" get "$@" <"$f"
}
ms() { awk -v n="$1" 'BEGIN{printf "%.3f", n/1e6}'; }
div() { awk -v a="$1" -v b="$2" -v k="${3:-1}" 'BEGIN{if(b==0){print "nan"}else{printf "%.6f", a*k/b}}'; }

# As root, ratecheck releases bursts at real-time priority (attack/release.go);
# the burst runs are repeated without that privilege (CAP_SYS_NICE dropped with
# setpriv, RLIMIT_RTPRIO is 0), which is what an ordinary user gets.
NOPRIV=0
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null && [[ $(ulimit -r) == 0 ]]; then NOPRIV=1; fi
UNPRIV=(setpriv --bounding-set=-sys_nice --inh-caps=-sys_nice)

# Per scheme: the sink's URL and how each tool is told to trust the sink's
# certificate (verification costs only at the handshake).
url_of() { if [[ $1 == https ]]; then echo "$URL_TLS"; else echo "$URL"; fi; }
rc_trust() { if [[ $1 == https ]]; then RC_TRUST=(--cacert "$WORK/sink.pem"); else RC_TRUST=(); fi; }
vg_trust() { if [[ $1 == https ]]; then VG_TRUST=(-root-certs="$WORK/sink.pem"); else VG_TRUST=(); fi; }
# the metric keys of a scheme's rows carry this suffix (kept in sx: timed
# sets s, u and m)
sfx() { if [[ $1 == https ]]; then echo _tls; fi; }

OBS=$WORK/obs.tsv
metric() { printf 'm\t%s\t%s\t%s\t%s\n' "$@" >>"$OBS"; }
obs() { printf 'v\t%s\t%s\t%s\n' "$@" >>"$OBS"; }

# Bars: an absolute bound on ratecheck's figure, or "OPxTOOL" (a bound on
# ratecheck's figure as a multiple of TOOL's in the same run); several are
# separated by commas. See bench/analyze.
metric max_rps "max throughput, 50 conns: tool's own report" rps -
metric max_sink_rps "max throughput, 50 conns: sink-counted" rps ">=2xvegeta,>=0.9xwrk"
metric max_cpu "CPU per request at max throughput" us -
metric max_rss "peak RSS at max throughput" MB -
metric max_sink_rps_tls "https max throughput, 50 conns: sink-counted" rps -
metric max_cpu_tls "https CPU per request at max throughput" us -
metric max_stream "results stream at max throughput (ratecheck .rcs, vegeta gob)" Bpr "<=64"
metric max_stream_jsonl "the same stream as JSON Lines (report -o jsonl)" Bpr -
metric c_rate "5000/s: sink-observed rate" rps "~5000±0.5%"
metric c_p50 "5000/s: sink-observed schedule error p50" ms -
metric c_p99 "5000/s: sink-observed schedule error p99" ms "<=0.3"
metric c_kp99 "5000/s: schedule error p99 at the sink's kernel stamps" ms "<=0.3"
metric c_cpu "CPU per request at 5000/s" us "<=1xvegeta"
metric c_tls_rate "https 5000/s: sink-observed rate" rps "~5000±0.5%"
metric c_tls_p50 "https 5000/s: sink-observed schedule error p50" ms -
metric c_tls_p99 "https 5000/s: sink-observed schedule error p99" ms "<=0.5"
metric c_tls_kp99 "https 5000/s: schedule error p99 at the sink's kernel stamps" ms "<=0.5"
metric c_tls_cpu "https CPU per request at 5000/s" us -
metric k_rate "1000/s: sink-observed rate" rps "~1000±0.5%"
metric k_p50 "1000/s: sink-observed schedule error p50" ms -
metric k_p99 "1000/s: sink-observed schedule error p99" ms "<1xvegeta"
metric k_kp99 "1000/s: schedule error p99 at the sink's kernel stamps" ms "<1xvegeta"
metric k_cpu "CPU per request at 1000/s" us -
metric b_kernel "burst of 100: arrival spread, sink's kernel stamps" ms "<=1"
metric b_read "burst of 100: arrival spread, sink's read stamps" ms "<=1"
if ((NOPRIV)); then
	metric b_kernel_np "burst of 100, no real-time priority: kernel stamps" ms -
	metric b_read_np "burst of 100, no real-time priority: read stamps" ms -
fi
metric b_tls_kernel "https burst of 100: arrival spread, sink's kernel stamps" ms "<=1"
metric b_tls_read "https burst of 100: arrival spread, sink's read stamps" ms -
if ((!QUICK)); then
	metric mem_rss "1M requests at 25000/s: peak RSS" MB "<100"
	metric mem_rate "1M requests at 25000/s: sink-observed rate" rps -
fi
metric rep_1m "report of a 1M-result .rcs stream, one core" resps ">=2000000"
metric rep_1m_rss "report of a 1M-result .rcs stream: peak RSS" MB "<100"
if ((!QUICK)); then
	metric rep_10m "report of a 10M-result .rcs stream, one core" resps ">=2000000"
	metric rep_10m_rss "report of a 10M-result .rcs stream: peak RSS" MB "<100"
	metric rep_shards "report of 10M results in 4 shards (merged), one core" resps ">=2000000"
	metric rep_shards_rss "report of 10M results in 4 shards (merged): peak RSS" MB "<100"
fi

# ---------------------------------------------------------------- max throughput
# ratecheck: closed loop, 50 connections. vegeta: -rate=0 needs -max-workers;
# -workers=50 starts all 50 at once (ratecheck opens its 50 at once too), and
# -connections=50 keeps 50 idle keep-alive connections. wrk: 50 connections
# on 2 threads (one per core). Each tool's own figure is its sent rate:
# ratecheck .metrics.achieved_rate_per_s, vegeta report .rate, wrk
# Requests/sec. The sink figure is (arrivals-1)/(last-first arrival).
max_tools=(ratecheck vegeta)
if ((HAVE_WRK)); then max_tools+=(wrk); fi
for rep in $(seq "$REPS"); do
	for scheme in http https; do
		url=$(url_of $scheme) sx=$(sfx $scheme)
		rc_trust $scheme
		vg_trust $scheme
		for tool in "${max_tools[@]}"; do
			wait_idle
			sink_reset
			case $tool in
			ratecheck)
				timed rc-max "$RC" attack --profile steady --rate max --connections 50 --duration 10s \
					--max-requests 5000000 --max-duration 1m "${RC_TRUST[@]}" --out "$WORK/rc-max.rcs" -o json "$url"
				own=$(jget "$WORK/rc-max.out" metrics.achieved_rate_per_s)
				reqs=$(jget "$WORK/rc-max.out" summary.requests)
				errs=$(jget "$WORK/rc-max.out" summary.errors)
				# the stream's size a request, compact (attack's default)
				# and as the JSON Lines the same run converts to
				stream_b=$(stat -c %s "$WORK/rc-max.rcs")
				jsonl_b=$("$RC" report "$WORK/rc-max.rcs" -o jsonl | wc -c)
				rm -f "$WORK/rc-max.rcs"
				;;
			vegeta)
				timed vg-max "$VG" attack -targets="$WORK/targets-$scheme.txt" "${VG_TRUST[@]}" -rate=0 -workers=50 \
					-max-workers=50 -connections=50 -duration=10s -output="$WORK/vg-max.bin"
				"$VG" report -type=json "$WORK/vg-max.bin" >"$WORK/vg-max.report.json"
				own=$(jget "$WORK/vg-max.report.json" rate)
				reqs=$(jget "$WORK/vg-max.report.json" requests)
				errs=$(awk -v r="$reqs" -v s="$(jget "$WORK/vg-max.report.json" success)" 'BEGIN{printf "%d", r*(1-s)+0.5}')
				stream_b=$(stat -c %s "$WORK/vg-max.bin") jsonl_b=
				rm -f "$WORK/vg-max.bin"
				;;
			wrk)
				timed wrk-max wrk -t2 -c50 -d10s "$url"
				own=$(awk '/^Requests\/sec:/{print $2}' "$WORK/wrk-max.out")
				reqs=$(awk '/ requests in /{print $1}' "$WORK/wrk-max.out")
				errs=$(awk '/Non-2xx|Socket errors/{n++} END{print n+0}' "$WORK/wrk-max.out")
				stream_b= jsonl_b= # wrk records no requests
				;;
			esac
			sink_arrivals "$WORK/arr.json"
			"$AN" arrivals <"$WORK/arr.json" >"$WORK/arr.kv"
			sink_rps=$(kv "$WORK/arr.kv" rate_per_s)
			cpu_us=$(div "$CPU_S" "$reqs" 1e6)
			stream=
			if [[ $scheme == http ]]; then
				obs max_rps $tool "$own"
				obs max_rss $tool "$RSS_MB"
				if [[ -n $stream_b ]]; then
					obs max_stream $tool "$(div "$stream_b" "$reqs")"
					stream=", stream $(printf %.1f "$(div "$stream_b" "$reqs")") B/req"
				fi
				if [[ -n $jsonl_b ]]; then
					obs max_stream_jsonl $tool "$(div "$jsonl_b" "$reqs")"
					stream+=" (as JSON Lines $(printf %.1f "$(div "$jsonl_b" "$reqs")"))"
				fi
			fi
			obs "max_sink_rps$sx" $tool "$sink_rps"
			obs "max_cpu$sx" $tool "$cpu_us"
			log "max[$rep] $scheme $tool: own $(printf %.0f "$own")/s, sink $(printf %.0f "$sink_rps")/s, requests $reqs (sink $(kv "$WORK/arr.kv" count)), errors $errs, CPU ${CPU_S}s = $(printf %.2f "$cpu_us") µs/req, RSS ${RSS_MB} MB$stream, sink CPU ${SINK_S}s, other CPU ${OTHER_S}s"
		done
	done
done

# ---------------------------------------------------------------- constant rate
# const_runs RATE SCHEME KEY: RATE/s for 10 s, both tools, REPS times.
# Schedule error as the sink saw it: i-th arrival vs i/rate, after removing
# the median offset (see analyze arrivals).
const_runs() {
	local rate=$1 scheme=$2 key=$3 url rep tool reqs self p50 p99 kp99 cpu_us arate
	url=$(url_of "$scheme")
	rc_trust "$scheme"
	vg_trust "$scheme"
	for rep in $(seq "$REPS"); do
		for tool in ratecheck vegeta; do
			wait_idle
			sink_reset
			if [[ $tool == ratecheck ]]; then
				timed rc-const "$RC" attack --profile steady --rate "$rate/s" --duration 10s \
					--max-requests 100000 --max-duration 1m "${RC_TRUST[@]}" --out "$WORK/rc-const.jsonl" -o json "$url"
				reqs=$(jget "$WORK/rc-const.out" summary.requests)
				self="own p99 lateness $(awk -v n="$(jget "$WORK/rc-const.out" summary.lateness.p99_ns)" 'BEGIN{printf "%.3f", n/1e6}') ms"
			else
				timed vg-const "$VG" attack -targets="$WORK/targets-$scheme.txt" "${VG_TRUST[@]}" -rate="$rate" -duration=10s \
					-output="$WORK/vg-const.bin"
				"$VG" report -type=json "$WORK/vg-const.bin" >"$WORK/vg-const.report.json"
				reqs=$(jget "$WORK/vg-const.report.json" requests)
				self="own rate $(printf %.1f "$(jget "$WORK/vg-const.report.json" rate)")/s"
				rm -f "$WORK/vg-const.bin"
			fi
			sink_arrivals "$WORK/arr.json"
			"$AN" arrivals -rate "$rate" <"$WORK/arr.json" >"$WORK/arr.kv"
			# The same schedule error at the kernel's receive stamps: what the
			# tool put on the wire, without the sink's own scheduling (and,
			# over https, its decryption) on the 2 shared cores.
			sink_kernel_arrivals "$WORK/karr.json"
			"$AN" arrivals -rate "$rate" <"$WORK/karr.json" >"$WORK/karr.kv"
			kp99=$(ms "$(kv "$WORK/karr.kv" sched_p99_ns)")
			arate=$(kv "$WORK/arr.kv" rate_per_s)
			p50=$(ms "$(kv "$WORK/arr.kv" sched_p50_ns)")
			p99=$(ms "$(kv "$WORK/arr.kv" sched_p99_ns)")
			cpu_us=$(div "$CPU_S" "$reqs" 1e6)
			if [[ $tool == ratecheck ]]; then
				# where ratecheck's error comes from: its own pacing (sent -
				# scheduled) or the way to the sink (arrival - sent)
				"$AN" decompose -results "$WORK/rc-const.jsonl" -sink-start "$SINK_START" <"$WORK/arr.json" >"$WORK/dec.kv"
				self="$self; split: late p50/p99 $(ms "$(kv "$WORK/dec.kv" late_p50_ns)")/$(ms "$(kv "$WORK/dec.kv" late_p99_ns)") ms, send->arrival p50/p99 $(ms "$(kv "$WORK/dec.kv" transit_p50_ns)")/$(ms "$(kv "$WORK/dec.kv" transit_p99_ns)") ms"
				self="$self; own CPU/req $({ jget "$WORK/rc-const.out" cpu.per_request_ns 2>/dev/null || echo nan; } | awk '{printf "%.1f µs", $1/1e3}')"
				rm -f "$WORK/rc-const.jsonl"
			fi
			obs "${key}_rate" $tool "$arate"
			obs "${key}_p50" $tool "$p50"
			obs "${key}_p99" $tool "$p99"
			obs "${key}_kp99" $tool "$kp99"
			obs "${key}_cpu" $tool "$cpu_us"
			log "const[$rep] $rate/s $scheme $tool: sink $(kv "$WORK/arr.kv" count) arrivals at $(printf %.1f "$arate")/s, schedule error p50 $(printf %.3f "$p50") ms p99 $(printf %.3f "$p99") ms max $(ms "$(kv "$WORK/arr.kv" sched_max_ns)") ms, at kernel stamps p99 $(printf %.3f "$kp99") ms ($(kv "$WORK/karr.kv" count) stamped); $self; CPU ${CPU_S}s = $(printf %.2f "$cpu_us") µs/req, other CPU ${OTHER_S}s"
		done
	done
}
# The machine's own floor: how late a bare real-time thread wakes from the
# 200 µs nanosleep a 5,000/s dispatcher sleeps (bench/floor). No tool's
# sends can be more punctual than its thread's wake-ups. Then the earlier of
# two such threads on two CPUs: far below one thread's tail, the host
# interrupts one virtual CPU at a time (a dispatcher hedged on two CPUs would
# beat the floor); alike, it stalls the whole machine.
wait_idle
"$WORK/floor" -period 200us -duration 5s >"$WORK/floor.kv"
FLOOR="real-time nanosleep (200 µs period) wakes late by p50 $(ms "$(kv "$WORK/floor.kv" p50_ns)") ms, p99 $(ms "$(kv "$WORK/floor.kv" p99_ns)") ms, p99.9 $(ms "$(kv "$WORK/floor.kv" p999_ns)") ms, max $(ms "$(kv "$WORK/floor.kv" max_ns)") ms (SCHED_FIFO granted: $(kv "$WORK/floor.kv" realtime))"
if [[ -n $(kv "$WORK/floor.kv" pair_p99_ns) ]]; then
	FLOOR+="; the earlier of two such threads, one pinned to each of two CPUs: p99 $(ms "$(kv "$WORK/floor.kv" pair_p99_ns)") ms, max $(ms "$(kv "$WORK/floor.kv" pair_max_ns)") ms"
fi
log "machine floor: $FLOOR"
const_runs 5000 http c
const_runs 5000 https c_tls
const_runs 1000 http k

# ---------------------------------------------------------------- burst
# ratecheck: --profile burst --burst 100 --idle 1s (pre-dialled connections,
# for https handshaken too, all but the last byte pre-written, released at
# one instant).
# vegeta has no burst mode. Its closest equivalent is the fastest release it
# can do of exactly 100 requests: a lazily read target list of 100 lines
# (vegeta stops when a lazy list runs out), -rate=0 (no pacing) and 100
# workers started up front (-workers=100 -max-workers=100), so each request
# goes out the moment a worker takes it. vegeta cannot pre-dial, so its
# spread includes 100 TCP connects (and for https 100 handshakes); that is
# what a vegeta user gets, and is the reason ratecheck's burst pre-dials.
# (-rate=100/1ms -duration=1ms was tried and rejected: when vegeta's pacer
# wakes late it stops at the 1 ms duration and sends fewer than 100.)
for scheme in http https; do
	for _ in $(seq 100); do echo "GET $(url_of $scheme)"; done >"$WORK/targets100-$scheme.txt"
done
for rep in $(seq "$BURSTS"); do
	for scheme in http https; do
		url=$(url_of $scheme) sx=$(sfx $scheme)
		rc_trust $scheme
		vg_trust $scheme
		tools=(ratecheck vegeta)
		if ((NOPRIV)) && [[ $scheme == http ]]; then tools=(ratecheck ratecheck-np vegeta); fi
		for tool in "${tools[@]}"; do
			wait_idle
			sink_reset
			case $tool in
			ratecheck | ratecheck-np)
				pre=()
				if [[ $tool == ratecheck-np ]]; then pre=("${UNPRIV[@]}"); fi
				timed rc-burst "${pre[@]}" "$RC" attack --profile burst --burst 100 --idle 1s "${RC_TRUST[@]}" \
					--out "$WORK/rc-burst.jsonl" -o json "$url"
				self="own send spread $(ms "$(jget "$WORK/rc-burst.out" metrics.send_spread_ns)") ms, real-time priority $(jget "$WORK/rc-burst.out" metrics.realtime_release)"
				rm -f "$WORK/rc-burst.jsonl" # the next burst's --out: ratecheck never writes over one
				;;
			vegeta)
				timed vg-burst "$VG" attack -lazy -targets="$WORK/targets100-$scheme.txt" "${VG_TRUST[@]}" -rate=0 \
					-workers=100 -max-workers=100 -duration=10s -output="$WORK/vg-burst.bin"
				# the 101st "request" is vegeta's own end-of-targets marker, never sent
				# vegeta also logs a failed pseudo-request for every worker that
				# found the target list empty; they never reach the wire
				self="own 200s $("$VG" report -type=json "$WORK/vg-burst.bin" | "$AN" get status_codes.200)"
				;;
			esac
			sink_arrivals "$WORK/arr.json"
			"$AN" arrivals <"$WORK/arr.json" >"$WORK/arr.kv"
			sink_kernel_arrivals "$WORK/karr.json"
			"$AN" arrivals <"$WORK/karr.json" >"$WORK/karr.kv"
			n=$(kv "$WORK/arr.kv" count)
			read_spread=$(ms "$(kv "$WORK/arr.kv" spread_ns)")
			kernel_spread=$(ms "$(kv "$WORK/karr.kv" spread_ns)")
			if [[ $n != 100 ]]; then log "WARNING: burst[$rep] $scheme $tool: sink saw $n requests, not 100"; fi
			kn=$(kv "$WORK/karr.kv" count)
			if [[ $kn != "$n" ]]; then log "WARNING: burst[$rep] $scheme $tool: only $kn of $n requests have a kernel receive stamp"; fi
			case $tool in
			ratecheck-np)
				obs b_kernel_np ratecheck "$kernel_spread"
				obs b_read_np ratecheck "$read_spread"
				;;
			*)
				obs "b${sx}_kernel" $tool "$kernel_spread"
				obs "b${sx}_read" $tool "$read_spread"
				if ((NOPRIV)) && [[ $tool == vegeta && $scheme == http ]]; then # vegeta never asks for real-time priority
					obs b_kernel_np $tool "$kernel_spread"
					obs b_read_np $tool "$read_spread"
				fi
				;;
			esac
			log "burst[$rep] $scheme $tool: sink $n arrivals within $(printf %.3f "$kernel_spread") ms (kernel stamps), $(printf %.3f "$read_spread") ms (read stamps); $self"
		done
	done
done

# ---------------------------------------------------------------- memory
# 1,000,000 requests at 25,000/s (40 s); peak RSS from GNU time (%M). vegeta
# gets the same rate and duration for comparison, with -max-workers=1000 to
# match ratecheck's default cap of 1,000 requests in flight: unbounded, vegeta
# on this box can fall behind, spawn thousands of workers and connections and
# reach GBs of RSS (seen: 2.3 GB, 7,600/s), which measures its collapse rather
# than its memory use.
if ((!QUICK)); then
	for tool in ratecheck vegeta; do
		wait_idle
		sink_reset
		if [[ $tool == ratecheck ]]; then
			timed rc-mem "$RC" attack --profile steady --rate 25000/s --duration 40s \
				--max-requests 1000000 --max-duration 2m --out "$WORK/rc-mem.rcs" -o json "$URL"
			reqs=$(jget "$WORK/rc-mem.out" summary.requests)
			errs=$(jget "$WORK/rc-mem.out" summary.errors)
			rm -f "$WORK/rc-mem.rcs"
		else
			timed vg-mem "$VG" attack -targets="$WORK/targets-http.txt" -rate=25000 -duration=40s -max-workers=1000 \
				-output="$WORK/vg-mem.bin"
			"$VG" report -type=json "$WORK/vg-mem.bin" >"$WORK/vg-mem.report.json"
			reqs=$(jget "$WORK/vg-mem.report.json" requests)
			errs=$(awk -v r="$reqs" -v s="$(jget "$WORK/vg-mem.report.json" success)" 'BEGIN{printf "%d", r*(1-s)+0.5}')
			rm -f "$WORK/vg-mem.bin"
		fi
		sink_arrivals "$WORK/arr.json"
		"$AN" arrivals <"$WORK/arr.json" >"$WORK/arr.kv"
		rate=$(kv "$WORK/arr.kv" rate_per_s)
		obs mem_rss $tool "$RSS_MB"
		obs mem_rate $tool "$rate"
		log "mem $tool: $reqs requests, $errs errors (sink $(kv "$WORK/arr.kv" count) at $(printf %.0f "$rate")/s), peak RSS ${RSS_MB} MB, CPU ${CPU_S}s, other CPU ${OTHER_S}s"
	done
fi

# ---------------------------------------------------------------- report
# `ratecheck report` of an attack's compact stream, on one core
# (GOMAXPROCS=1, the collector included): results per second of wall time
# and peak RSS. The streams are bench/streamgen's synthetic steady attack
# (sends every 50 µs on 50 connections, seven rate-limit headers, a quarter
# rejected), written through results.Stream as attack writes them; 1M
# always, and in a full run 10M, whole and in 4 shards merged.
report_run() { # KEY N FILE...
	local key=$1 n=$2
	shift 2
	wait_idle
	timed rc-report env GOMAXPROCS=1 "$RC" report "$@" -o json
	local rps
	rps=$(div "$n" "$WALL_S")
	obs "$key" ratecheck "$rps"
	obs "${key}_rss" ratecheck "$RSS_MB"
	log "report $key: $n results in $WALL_S s = $(printf %.0f "$rps")/s (CPU ${CPU_S}s), peak RSS $RSS_MB MB, other CPU ${OTHER_S}s; $(du -ch "$@" | tail -1 | cut -f1) on disk"
}
"$WORK/streamgen" -n 1000000 -out "$WORK/gen-1m.rcs"
report_run rep_1m 1000000 "$WORK/gen-1m.rcs"
rm -f "$WORK/gen-1m.rcs"
if ((!QUICK)); then
	"$WORK/streamgen" -n 10000000 -out "$WORK/gen-10m.rcs"
	report_run rep_10m 10000000 "$WORK/gen-10m.rcs"
	rm -f "$WORK/gen-10m.rcs"
	"$WORK/streamgen" -n 10000000 -shards 4 -out "$WORK/gen-sh.rcs"
	report_run rep_shards 10000000 "$WORK"/gen-sh-*.rcs
	rm -f "$WORK"/gen-sh-*.rcs
fi

# ---------------------------------------------------------------- table
echo
"$AN" table "$OBS"
if ((CONTENDED > 0)); then
	echo "WARNING: $CONTENDED run(s) started while other processes were using the CPU: figures are contaminated"
fi
echo "machine: $(nproc) cores, $(uname -r); tools and sink unpinned, sharing the cores (see bench/README.md)"
echo "machine floor: $FLOOR"
