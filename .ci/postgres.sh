# shellcheck shell=bash
#
# postgres.sh starts a throwaway PostgreSQL cluster for the store/postgres
# tests and exports its address as ASU_POSTGRES_DSN. It is meant to be
# sourced:
#
#	source .ci/postgres.sh || exit 1
#
# What it does:
#   - if ASU_POSTGRES_DSN is already set, it leaves it alone and starts nothing;
#   - installs PostgreSQL from Debian's packages when initdb/pg_ctl are missing;
#   - creates a cluster in a fresh directory under /tmp (or
#     ASU_POSTGRES_TMPDIR) owned by an unprivileged user (postgres, or the
#     current user when not root);
#   - starts it on 127.0.0.1 only, on a private port (ASU_POSTGRES_PORT,
#     default 55432, or the next free one), with its socket in that directory;
#   - creates the database "asu" and exports
#     ASU_POSTGRES_DSN=postgres://asu@127.0.0.1:PORT/asu?sslmode=disable;
#   - registers an EXIT trap (chained after any existing one) that stops the
#     cluster and removes the directory. A caller that replaces the EXIT trap
#     later must call asu_postgres_stop itself.
#
# Sourcing it again in the same shell reuses the running cluster.

asu_postgres_log() { echo "postgres.sh: $*" >&2; }

# asu_postgres_bindir prints the directory holding initdb and pg_ctl.
asu_postgres_bindir() {
	local d
	# Newest version first; an unmatched glob stays literal and fails -x.
	for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return 0
		fi
	done
	if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
		dirname "$(command -v initdb)"
		return 0
	fi
	return 1
}

# asu_postgres_install installs the server from Debian's packages.
asu_postgres_install() {
	if [ "$(id -u)" != 0 ]; then
		asu_postgres_log "PostgreSQL is not installed and we are not root: install the postgresql package"
		return 1
	fi
	asu_postgres_log "installing PostgreSQL from Debian's packages"
	# The package's own cluster is not used; keep it from starting.
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
}

# asu_postgres_as runs a command as the cluster's owner.
asu_postgres_as() {
	# From /, which every user may enter: the caller's directory may not be.
	if [ "$(id -u)" = 0 ]; then
		if command -v runuser >/dev/null 2>&1; then
			(cd / && runuser -u "$ASU_POSTGRES_OWNER" -- "$@")
		else
			(cd / && su -s /bin/sh "$ASU_POSTGRES_OWNER" -c "$(printf '%q ' "$@")")
		fi
	else
		"$@"
	fi
}

# asu_postgres_port_free reports whether nothing listens on 127.0.0.1:$1.
asu_postgres_port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# asu_postgres_stop stops the cluster and removes its directory.
asu_postgres_stop() {
	if [ -n "${ASU_POSTGRES_DIR:-}" ] && [ -d "$ASU_POSTGRES_DIR" ]; then
		asu_postgres_as "$ASU_POSTGRES_BIN/pg_ctl" -D "$ASU_POSTGRES_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
		rm -rf "$ASU_POSTGRES_DIR"
	fi
	if [ -n "${ASU_POSTGRES_DIR:-}" ]; then
		unset ASU_POSTGRES_DSN ASU_POSTGRES_DIR
	fi
}

# asu_postgres_start does the work described at the top of this file.
asu_postgres_start() {
	if [ -n "${ASU_POSTGRES_DIR:-}" ] && [ -n "${ASU_POSTGRES_DSN:-}" ] &&
		asu_postgres_as "$ASU_POSTGRES_BIN/pg_ctl" -D "$ASU_POSTGRES_DIR/data" status >/dev/null 2>&1; then
		asu_postgres_log "reusing the running cluster"
		return 0
	fi
	if [ -n "${ASU_POSTGRES_DSN:-}" ]; then
		asu_postgres_log "ASU_POSTGRES_DSN is already set; using that database"
		return 0
	fi

	local bin
	if ! bin=$(asu_postgres_bindir); then
		asu_postgres_install || return 1
		bin=$(asu_postgres_bindir) || {
			asu_postgres_log "initdb not found after installing postgresql"
			return 1
		}
	fi
	ASU_POSTGRES_BIN=$bin

	if [ "$(id -u)" = 0 ]; then
		ASU_POSTGRES_OWNER=postgres
		if ! id "$ASU_POSTGRES_OWNER" >/dev/null 2>&1; then
			useradd --system --no-create-home --shell /usr/sbin/nologin "$ASU_POSTGRES_OWNER" || return 1
		fi
	else
		ASU_POSTGRES_OWNER=$(id -un)
	fi

	local port=${ASU_POSTGRES_PORT:-55432} tries=0
	while ! asu_postgres_port_free "$port"; do
		port=$((port + 1))
		tries=$((tries + 1))
		if [ "$tries" -ge 50 ]; then
			asu_postgres_log "no free port near ${ASU_POSTGRES_PORT:-55432}"
			return 1
		fi
	done

	local dir
	# Under /tmp (or ASU_POSTGRES_TMPDIR), not TMPDIR, which the cluster's
	# owner may not be allowed to enter.
	dir=$(mktemp -d "${ASU_POSTGRES_TMPDIR:-/tmp}/asu-postgres.XXXXXX") || return 1
	chmod 0700 "$dir"
	[ "$(id -u)" = 0 ] && chown "$ASU_POSTGRES_OWNER" "$dir"
	ASU_POSTGRES_DIR=$dir

	# Run our cleanup, then whatever EXIT trap the caller already had.
	local prev
	prev=$(trap -p EXIT)
	prev=${prev#trap -- \'}
	prev=${prev%\' EXIT}
	prev=${prev//\'\\\'\'/\'}
	case "$prev" in
	*asu_postgres_stop*) ;;
	"") trap 'asu_postgres_stop' EXIT ;;
	*)
		# shellcheck disable=SC2064 # the earlier trap's text is meant to be expanded now
		trap "asu_postgres_stop; $prev" EXIT
		;;
	esac
	# Without a handler, INT and TERM kill the shell without running EXIT traps.
	[ -z "$(trap -p INT)" ] && trap 'exit 130' INT
	[ -z "$(trap -p TERM)" ] && trap 'exit 143' TERM

	if ! asu_postgres_as "$bin/initdb" -D "$dir/data" -U asu -A trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1; then
		asu_postgres_log "initdb failed:"
		cat "$dir/initdb.log" >&2
		asu_postgres_stop
		return 1
	fi
	if ! asu_postgres_as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300" start >/dev/null; then
		asu_postgres_log "the server did not start:"
		cat "$dir/server.log" >&2
		asu_postgres_stop
		return 1
	fi
	if ! asu_postgres_as "$bin/createdb" -h 127.0.0.1 -p "$port" -U asu asu; then
		asu_postgres_log "createdb failed"
		asu_postgres_stop
		return 1
	fi

	export ASU_POSTGRES_DSN="postgres://asu@127.0.0.1:$port/asu?sslmode=disable"
	asu_postgres_log "PostgreSQL $("$bin/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port; ASU_POSTGRES_DSN exported"
}

asu_postgres_start
