#!/usr/bin/env bash
# A real Neo4j Community (embedded DBMS with Bolt, tools/neo4j-launcher) for tests and CI, no Docker.
#
#   eval "$(scripts/neo4j-test-server.sh start)"   # builds if needed, starts, waits for Bolt, prints exports
#   ... pytest tests/integration/test_graph_store_contract.py ...
#   scripts/neo4j-test-server.sh stop              # kills it and removes its temp data dir
#   scripts/neo4j-test-server.sh status
#
# Only `export ...` lines go to stdout (so eval is safe); progress and errors go to stderr.
# Bolt listens on 127.0.0.1 only. Auth is ON: user neo4j, password $NEO4J_TEST_PASSWORD
# (default "agent-memory-test"; Neo4j wants >= 8 characters).
# State lives in $NEO4J_TEST_STATE_DIR (default ${TMPDIR:-/tmp}/agent-memory-neo4j-test): pid, port, log, data.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LAUNCHER="$ROOT/tools/neo4j-launcher"
STATE="${NEO4J_TEST_STATE_DIR:-${TMPDIR:-/tmp}/agent-memory-neo4j-test}"
PID_FILE="$STATE/neo4j.pid"
PASSWORD="${NEO4J_TEST_PASSWORD:-agent-memory-test}"
WAIT_S="${NEO4J_TEST_WAIT_S:-120}"

log() { echo "neo4j-test-server: $*" >&2; }

build() {
    if [[ -f "$LAUNCHER/target/classes/agentmemory/Neo4jLauncher.class" && -d "$LAUNCHER/target/lib" \
          && "$LAUNCHER/target/classes/agentmemory/Neo4jLauncher.class" -nt "$LAUNCHER/src/main/java/agentmemory/Neo4jLauncher.java" \
          && "$LAUNCHER/target/lib" -nt "$LAUNCHER/pom.xml" ]]; then
        return 0
    fi
    log "building tools/neo4j-launcher with Maven (first run downloads ~160 MB)"
    (cd "$LAUNCHER" && mvn -q -B package -DskipTests) >&2
    touch "$LAUNCHER/target/lib"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

running_pid() {
    [[ -f "$PID_FILE" ]] || return 1
    local pid; pid="$(cat "$PID_FILE")"
    kill -0 "$pid" 2>/dev/null || return 1
    echo "$pid"
}

print_exports() {
    local port; port="$(cat "$STATE/port")"
    echo "export AGENT_MEMORY_NEO4J_URI=bolt://127.0.0.1:$port"
    echo "export AGENT_MEMORY_NEO4J_USER=neo4j"
    echo "export AGENT_MEMORY_NEO4J_PASSWORD=$PASSWORD"
    echo "export NEO4J_TEST_PID_FILE=$PID_FILE"
}

start() {
    if running_pid >/dev/null; then
        log "already running (pid $(cat "$PID_FILE"))"
        print_exports
        return 0
    fi
    command -v java >/dev/null || { log "java not found (JDK 17 needed)"; exit 1; }
    build
    rm -rf "$STATE"
    mkdir -p "$STATE/data"
    local port; port="$(free_port)"
    echo "$port" > "$STATE/port"
    # setsid: the server must outlive the shell that eval'd us, and stop must not hit our caller.
    NEO4J_PASSWORD="$PASSWORD" setsid java -Xms256m -Xmx1g \
        -cp "$LAUNCHER/target/classes:$LAUNCHER/target/lib/*" \
        agentmemory.Neo4jLauncher "$STATE/data" "$port" > "$STATE/neo4j.log" 2>&1 < /dev/null &
    echo $! > "$PID_FILE"
    log "started pid $! on bolt://127.0.0.1:$port, log $STATE/neo4j.log"
    local waited=0
    until grep -q '^READY ' "$STATE/neo4j.log" 2>/dev/null; do
        if ! running_pid >/dev/null; then
            log "server exited during start; last log lines:"; tail -n 30 "$STATE/neo4j.log" >&2; exit 1
        fi
        if (( waited >= WAIT_S )); then
            log "Bolt not ready after ${WAIT_S}s; stopping"; stop; exit 1
        fi
        sleep 1; waited=$((waited + 1))
    done
    # READY is printed after Bolt is bound; still check the port answers before handing it out.
    python3 - "$port" <<'PY' || { log "Bolt port does not answer"; stop; exit 1; }
import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
PY
    log "ready after ~${waited}s"
    print_exports
}

stop() {
    local pid
    if pid="$(running_pid)"; then
        kill "$pid"
        for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
        kill -0 "$pid" 2>/dev/null && { log "pid $pid did not stop on TERM; killing"; kill -9 "$pid"; }
        log "stopped pid $pid"
    else
        log "not running"
    fi
    rm -rf "$STATE"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) if pid="$(running_pid)"; then log "running pid $pid"; print_exports; else log "not running"; exit 1; fi ;;
    build) build ;;
    *) echo "usage: $0 start|stop|status|build" >&2; exit 2 ;;
esac
