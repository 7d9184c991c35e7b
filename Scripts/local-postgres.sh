#!/usr/bin/env bash
# A private PostgreSQL cluster for trying sync and for the sync benchmark: its own data
# directory, listening on 127.0.0.1 only, trust authentication for the `postgres` user, the
# server's default durability. Runs initdb and pg_ctl as the postgres user when called as
# root (initdb refuses root).
#
#   Scripts/local-postgres.sh start DIR [PORT]   creates DIR if needed, starts the server on
#                                                PORT (default: a free port) and prints its port
#   Scripts/local-postgres.sh stop DIR           stops it (fast shutdown) and removes DIR
#
# Needs the server binaries: apt-get install -y postgresql-15 (brew install postgresql@15).
set -euo pipefail
command=${1:-}
directory=${2:-}
[ -n "$command" ] && [ -n "$directory" ] || { sed -n '7,9p' "$0" >&2; exit 2; }
bin=$(pg_config --bindir 2>/dev/null || true)
[ -x "$bin/initdb" ] || bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
[ -x "$bin/initdb" ] || { echo "PostgreSQL server binaries not found: install postgresql-15" >&2; exit 1; }
as_owner=()
[ "$(id -u)" = 0 ] && as_owner=(/usr/sbin/runuser -u postgres --)
data="$directory/data"

case "$command" in
start)
    if [ -f "$directory/port" ] && ${as_owner[@]+"${as_owner[@]}"} "$bin/pg_ctl" status -D "$data" > /dev/null 2>&1; then
        cat "$directory/port"
        exit 0
    fi
    mkdir -p "$directory"
    chmod 755 "$directory"
    [ "$(id -u)" = 0 ] && chown postgres "$directory"
    port=${3:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
    [ -d "$data" ] || ${as_owner[@]+"${as_owner[@]}"} "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 > "$directory/initdb.log"
    if ! ${as_owner[@]+"${as_owner[@]}"} "$bin/pg_ctl" start -w -D "$data" -l "$directory/server.log" \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$directory" > /dev/null; then
        echo "PostgreSQL did not start; the end of its log:" >&2
        tail -50 "$directory/server.log" >&2 || true
        exit 1
    fi
    echo "$port" > "$directory/port.tmp" && mv "$directory/port.tmp" "$directory/port"
    echo "$port"
    ;;
stop)
    # The files go only once the server is gone: a postmaster whose data directory was
    # removed could no longer be stopped by pg_ctl. A stopped server can linger as a zombie
    # until its parent reaps it; that counts as gone.
    alive() { kill -0 "$1" 2> /dev/null && [ "$(ps -o stat= -p "$1" 2> /dev/null | cut -c1)" != Z ]; }
    if [ -f "$data/postmaster.pid" ]; then
        pid=$(head -1 "$data/postmaster.pid")
        if ! ${as_owner[@]+"${as_owner[@]}"} "$bin/pg_ctl" stop -m fast -w -D "$data" > /dev/null 2>&1; then
            kill -QUIT "$pid" 2> /dev/null || true   # immediate shutdown
            for _ in 1 2 3 4 5 6 7 8 9 10; do alive "$pid" || break; sleep 0.5; done
            kill -KILL "$pid" 2> /dev/null || true
            sleep 0.5
            if alive "$pid"; then
                echo "PostgreSQL (pid $pid) did not stop; $directory is kept" >&2
                exit 1
            fi
        fi
    fi
    rm -rf "$directory"
    ;;
*)
    sed -n '7,9p' "$0" >&2
    exit 2
    ;;
esac
