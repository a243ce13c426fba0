#!/usr/bin/env bash
# A real PostgreSQL (Debian's packages) on loopback for tests and CI, no Docker.
#
#   eval "$(scripts/postgres-test-server.sh start)"   # installs if needed, starts, waits, prints exports
#   ... pytest -m postgres ...
#   scripts/postgres-test-server.sh stop              # stops it and removes its temp state dir
#   scripts/postgres-test-server.sh restart           # restarts it in place (same port, same data)
#   scripts/postgres-test-server.sh status
#
# Only `export ...` lines go to stdout (so eval is safe); progress and errors go to stderr.
# The server listens on 127.0.0.1 only, on a free port, with password auth (scram) for TCP;
# database and role "agent_memory", password $POSTGRES_TEST_PASSWORD (default "agent-memory-test").
# As root the server runs as the "postgres" user (initdb refuses root); the packages are installed
# with apt-get when no PostgreSQL binaries are found.
# State lives in $POSTGRES_TEST_STATE_DIR (default ${TMPDIR:-/tmp}/agent-memory-postgres-test).
set -euo pipefail

STATE="${POSTGRES_TEST_STATE_DIR:-${TMPDIR:-/tmp}/agent-memory-postgres-test}"
PASSWORD="${POSTGRES_TEST_PASSWORD:-agent-memory-test}"
DB_NAME=agent_memory
DB_USER=agent_memory

log() { echo "postgres-test-server: $*" >&2; }

pg_bin() {
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
    [[ -n "$dir" && -x "$dir/initdb" ]] || return 1
    echo "$dir"
}

install_packages() {
    if pg_bin >/dev/null; then return 0; fi
    if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
        log "no PostgreSQL found under /usr/lib/postgresql and cannot apt-get install it (not root or no apt)"
        exit 1
    fi
    log "installing PostgreSQL from Debian packages"
    # The package's own cluster is not used: policy-rc.d keeps it from starting on install.
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
    pg_bin >/dev/null || { log "apt-get installed no /usr/lib/postgresql/*/bin/initdb"; exit 1; }
}

# Run a server binary as the server's user: "postgres" when we are root, else ourselves.
as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

running() {
    [[ -f "$STATE/port" && -f "$STATE/data/postmaster.pid" ]] || return 1
    local bin; bin="$(pg_bin)" || return 1
    as_owner "$bin/pg_ctl" -D "$STATE/data" status >/dev/null 2>&1
}

print_exports() {
    local port; port="$(cat "$STATE/port")"
    # Percent-encoded: a password with '/', '@', '%' or ':' raw in the URL makes libpq read another host.
    local quoted; quoted="$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$PASSWORD")"
    echo "export AGENT_MEMORY_POSTGRES_URL=postgresql://$DB_USER:$quoted@127.0.0.1:$port/$DB_NAME"
    echo "export POSTGRES_TEST_STATE_DIR=$STATE"
}

start() {
    if running; then
        log "already running on port $(cat "$STATE/port")"
        print_exports
        return 0
    fi
    install_packages
    local bin; bin="$(pg_bin)"
    rm -rf "$STATE"
    mkdir -p "$STATE"
    if [[ "$(id -u)" == 0 ]]; then
        id postgres >/dev/null 2>&1 || useradd --system --home-dir "$STATE" --shell /bin/false postgres
        chown postgres "$STATE"
        # The parent of a private temp dir may not be searchable by postgres.
        chmod o+x "$(dirname "$STATE")" 2>/dev/null || true
    fi
    local port; port="$(free_port)"
    echo "$port" > "$STATE/port"
    as_owner "$bin/initdb" -D "$STATE/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 > "$STATE/initdb.log" 2>&1 \
        || { log "initdb failed:"; cat "$STATE/initdb.log" >&2; exit 1; }
    # Unix socket in the state dir (not /var/run/postgresql, which may not exist); TCP on loopback only.
    as_owner "$bin/pg_ctl" -D "$STATE/data" -l "$STATE/data/server.log" -w -t 60 \
        -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$STATE -c max_connections=200 -c fsync=off" \
        start >&2 || { log "server did not start; last log lines:"; tail -n 30 "$STATE/data/server.log" >&2; exit 1; }
    as_owner "$bin/psql" -q -v ON_ERROR_STOP=1 -h "$STATE" -p "$port" -U postgres -d postgres >&2 <<SQL
CREATE ROLE $DB_USER LOGIN PASSWORD '$PASSWORD';
CREATE DATABASE $DB_NAME OWNER $DB_USER;
SQL
    log "ready on 127.0.0.1:$port (state $STATE)"
    print_exports
}

stop() {
    local bin
    if running && bin="$(pg_bin)"; then
        as_owner "$bin/pg_ctl" -D "$STATE/data" -m fast -w stop >&2 || true
        log "stopped"
    else
        log "not running"
    fi
    rm -rf "$STATE"
}

restart() {
    # The same server on the same port and data (pg_ctl reuses the options it was started with): what a
    # client's pool sees when PostgreSQL is restarted under it (tests/integration/test_postgres_restart.py).
    local bin
    running && bin="$(pg_bin)" || { log "not running"; exit 1; }
    as_owner "$bin/pg_ctl" -D "$STATE/data" -m fast -w -l "$STATE/data/server.log" restart >/dev/null 2>&1
    log "restarted"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    restart) restart ;;
    status) if running; then log "running on port $(cat "$STATE/port")"; print_exports; else log "not running"; exit 1; fi ;;
    *) echo "usage: $0 start|stop|restart|status" >&2; exit 2 ;;
esac
