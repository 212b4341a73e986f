#!/usr/bin/env bash
# Fault runs of the InfluxDB write API (issue 22): a write load against `sluice serve` while
# PostgreSQL crashes or stops, or Sluice is killed; then every point acknowledged (204) must be
# in PostgreSQL. Each scenario runs on a fresh PostgreSQL cluster of its own (initdb in a
# temporary folder, SCRAM auth, loopback only), prints the load's figures and the comparison,
# and fails when a single acknowledged point is missing.
#
#   crates/influx/fault/run.sh [SCENARIO...]
#
# Scenarios (default: all):
#   pg-kill-backend     kill -9 one PostgreSQL backend serving Sluice (the postmaster then
#                       ends every session and recovers, as after a crash)
#   pg-kill-postmaster  kill -9 the postmaster and its children; started again 2 s later
#   pg-fast-stop        pg_ctl stop -m fast; started again 2 s later
#   sluice-kill         kill -9 sluice serve; started again 1 s later
#
# Needs PostgreSQL's initdb/pg_ctl on PATH (or PG_BIN), python3, psql, and a release build
# (cargo build --release -p sluice; or SLUICE_BIN). Load: 4 writers, 500 points a request,
# for LOAD_SECONDS (default 12), the fault at 4 s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
sluice=${SLUICE_BIN:-$root/target/release/sluice}
pg_bin=${PG_BIN:-$(dirname "$(command -v pg_ctl)")}
load_seconds=${LOAD_SECONDS:-12}
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(pg-kill-backend pg-kill-postmaster pg-fast-stop sluice-kill)
[ -x "$sluice" ] || { echo "no $sluice: cargo build --release -p sluice" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

run_scenario() {
    local scenario=$1 work pg_port http_port password url sluice_pid load_pid
    work=$(mktemp -d /tmp/sluice-fault.XXXXXX)
    chmod 755 "$work"
    pg_port=$(free_port)
    http_port=$(free_port)
    password=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
    mkdir -p "$work/pg" "$work/sock"
    printf '%s\n' "$password" > "$work/pw"
    [ "$(id -u)" = 0 ] && chown -R postgres "$work/pg" "$work/sock" "$work/pw"
    as_pg "$pg_bin/initdb" -D "$work/pg" -U postgres --auth=scram-sha-256 \
        --pwfile="$work/pw" >/dev/null
    pg_start() {
        as_pg "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg/log" -w -o \
            "-p $pg_port -k $work/sock -c listen_addresses=127.0.0.1" start >/dev/null
    }
    pg_start
    url="postgres://postgres:$password@127.0.0.1:$pg_port/postgres"
    sluice_start() {
        SLUICE_LOG=warn SLUICE_HTTP_ACCESS_LOG=false "$sluice" serve -d "$url" \
            --http "127.0.0.1:$http_port" >>"$work/sluice.log" 2>&1 &
        sluice_pid=$!
        for _ in $(seq 100); do
            python3 -c "import socket; socket.create_connection(('127.0.0.1', $http_port), 0.2)" \
                2>/dev/null && return 0
            sleep 0.1
        done
        echo "sluice serve did not start:" >&2; cat "$work/sluice.log" >&2; return 1
    }
    sluice_start
    python3 "$here/load.py" run "http://127.0.0.1:$http_port" fault "$load_seconds" \
        "$work/acked" >"$work/load.out" &
    load_pid=$!
    sleep 4
    local postmaster
    postmaster=$(head -1 "$work/pg/postmaster.pid")
    case $scenario in
        pg-kill-backend)
            local backend
            backend=$(PGPASSWORD=$password psql -h 127.0.0.1 -p "$pg_port" -U postgres -Atc \
                "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'
                   AND pid <> pg_backend_pid() ORDER BY state = 'active' DESC LIMIT 1" postgres)
            echo "$scenario: kill -9 backend $backend"
            kill -9 "$backend"
            ;;
        pg-kill-postmaster)
            echo "$scenario: kill -9 postmaster $postmaster and its children"
            pkill -9 -P "$postmaster" || true
            kill -9 "$postmaster"
            sleep 2
            rm -f "$work/pg/postmaster.pid"
            pg_start
            ;;
        pg-fast-stop)
            echo "$scenario: pg_ctl stop -m fast"
            as_pg "$pg_bin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null
            sleep 2
            pg_start
            ;;
        sluice-kill)
            echo "$scenario: kill -9 sluice serve $sluice_pid"
            kill -9 "$sluice_pid"
            sleep 1
            sluice_start
            ;;
        *) echo "unknown scenario $scenario" >&2; exit 2 ;;
    esac
    wait "$load_pid"
    cat "$work/load.out"
    PGPASSWORD=$password psql -h 127.0.0.1 -p "$pg_port" -U postgres -Atc \
        "SELECT writer || '|' || seq FROM fault.load" postgres >"$work/present"
    local status=0
    python3 "$here/load.py" verify "$work/acked" "$work/present" || status=$?
    kill "$sluice_pid" 2>/dev/null || true
    wait "$sluice_pid" 2>/dev/null || true
    as_pg "$pg_bin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
    if [ $status -eq 0 ]; then rm -rf "$work"; else echo "kept $work" >&2; fi
    return $status
}

failed=0
for scenario in "${scenarios[@]}"; do
    run_scenario "$scenario" || failed=1
done
exit $failed
