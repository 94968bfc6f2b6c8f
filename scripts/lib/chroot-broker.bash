# shellcheck shell=bash
# A real RabbitMQ broker from a Debian suite, in a chroot beside the machine's own RabbitMQ 3.10
# (rabbit@localhost, 5672/15672) and beside the other chroot brokers, all left alone. Sourced by
# scripts/broker-4 (4.0.x from trixie) and scripts/broker-4.3 (4.3.x from sid), which set:
#
#   NAME         script name, for messages and the config files' first line (broker-4)
#   LABEL        what the broker is called in messages (RabbitMQ 4.0)
#   DIR          the chroot directory
#   SUITE        the Debian suite to debootstrap (trixie, sid)
#   WANT_VERSION the rabbitmq-server package version it must be (a prefix: 4.0., 4.3.)
#   NODE         Erlang node name (rabbit4@localhost); unique per broker on the host's epmd
#   AMQP_PORT DIST_PORT MGMT_PORT
#   TIMEOUT      seconds to wait for the management API
#   MIRROR       Debian mirror override (empty: the one in this machine's apt sources)
#   MIRROR_VAR   the environment variable that sets MIRROR, for the error message
#
# then call broker_main "$@". Each broker has its own Erlang cookie (DIR/var/lib/rabbitmq/
# .erlang.cookie), node name and distribution port, and shares the host's epmd, so none can
# join another's cluster.
#
# Exit codes: 0 ok; 3 the broker cannot be built here (no root, no mirror, no disk space,
# debootstrap or the package install failed, the suite carries another version), so callers can
# skip its tests; anything else non-zero is another failure, with a message on stderr.

API="http://127.0.0.1:$MGMT_PORT/api"
MARKER="$DIR/.$NAME-built"
LOG="$DIR.build.log"
LOCK="$DIR.lock"
NEED_MB=600 # debootstrap ~214 MB + rabbitmq-server and Erlang ~150 MB, with headroom

say() { printf '%s: %s\n' "$NAME" "$*" >&2; }
die() { say "$1"; exit "${2:-1}"; }
cannot_build() { die "cannot build the $LABEL broker: $*" 3; }
trap 'die "failed at line $LINENO: $BASH_COMMAND (exit $?)"' ERR

overview() { curl -fsS --max-time 5 -u guest:guest "$API/overview" 2>/dev/null; }
version_of() { sed -n 's/.*"rabbitmq_version":"\([^"]*\)".*/\1/p'; }
api_up() { overview >/dev/null; }

# Run a command inside the chroot with a clean environment (the host's may name host paths).
in_root() {
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive chroot "$DIR" "$@"
}

# Processes whose root directory is the chroot: the node, its helpers, maybe its epmd.
chroot_pids() {
  local p root
  for p in /proc/[0-9]*; do
    root=$(readlink "$p/root" 2>/dev/null) || continue
    [[ "$root" == "$DIR" ]] && printf '%s\n' "${p#/proc/}"
  done
  return 0
}
# The broker's own Erlang VM: its home is the rabbitmq user's. scripts/cluster,
# scripts/broker-plain and scripts/broker-plain-4.3 run more nodes from a chroot's packages, each
# with a home of its own (home_pid below), which are not this broker.
node_running() {
  local p
  for p in $(chroot_pids); do
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- 'beam.*-home /var/lib/rabbitmq ' && return 0
  done
  return 1
}

# More nodes from the chroot's packages beside its own broker (scripts/cluster, lib/plain-node.bash),
# each with a home of its own inside the chroot (HOME below): its env file, config, enabled
# plugins, data, logs and Erlang cookie live there, so the chroot's own broker (home
# /var/lib/rabbitmq, node_running above) and the other nodes are neither read nor touched.

# The Erlang VM of the node whose home is HOME: a beam whose root is the chroot.
home_pid() {
  local p home="-home $1 "
  for p in $(chroot_pids); do
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "beam.*$home" && { printf '%s\n' "$p"; return 0; }
  done
  return 1
}

# A command as the rabbitmq user with the node's HOME (its cookie) and env file.
as_home() {
  local home=$1
  shift
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" LANG=C.UTF-8 \
    RABBITMQ_CONF_ENV_FILE="$home/rabbitmq-env.conf" \
    chroot --userspec=rabbitmq:rabbitmq "$DIR" "$@"
}

# The env file of the node at HOME: node name and ports, and every file of its own under HOME.
# Returns 0 when it changed (write_if_changed).
write_home_env() {
  local home=$1 node=$2 amqp=$3 dist=$4
  write_if_changed "$DIR$home/rabbitmq-env.conf" "# written by scripts/$NAME
NODENAME=$node
NODE_PORT=$amqp
DIST_PORT=$dist
CONFIG_FILE=$home/rabbitmq.conf
ADVANCED_CONFIG_FILE=$home/advanced.config
ENABLED_PLUGINS_FILE=$home/enabled_plugins
MNESIA_BASE=$home/data
LOG_BASE=$home/log"
}

# An Erlang cookie at FILE (host path), made once; the caller chowns and makes it rabbitmq's only.
make_cookie_file() {
  [[ -s "$1" ]] && return 0
  mkdir -p "$(dirname "$1")"
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr 'a-f' 'A-F' >"$1"
}

# Starts the node at HOME, detached. setsid: it belongs to no caller's session; 9>&-: nor holds
# the caller's lock.
start_home() {
  local home=$1
  setsid env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" LANG=C.UTF-8 \
    RABBITMQ_CONF_ENV_FILE="$home/rabbitmq-env.conf" \
    chroot --userspec=rabbitmq:rabbitmq "$DIR" /usr/lib/rabbitmq/bin/rabbitmq-server -detached \
    </dev/null >>"$LOG" 2>&1 9>&-
}

is_mounted() { mountpoint -q "$1" 2>/dev/null; }
mount_binds() {
  local d
  for d in proc dev; do
    mkdir -p "$DIR/$d"
    if ! is_mounted "$DIR/$d"; then
      mount --bind "/$d" "$DIR/$d" || cannot_build "cannot bind-mount /$d into $DIR (needs root and mount rights)"
    fi
  done
}
umount_binds() {
  local d
  for d in dev proc; do
    if is_mounted "$DIR/$d"; then umount "$DIR/$d" || umount -l "$DIR/$d"; fi
  done
}

# The first non-security Debian mirror in this machine's apt sources.
debian_mirror() {
  if [[ -n "${MIRROR:-}" ]]; then printf '%s\n' "${MIRROR%/}"; return; fi
  local files=() f uri
  [[ -f /etc/apt/sources.list ]] && files+=(/etc/apt/sources.list)
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] && files+=("$f")
  done
  ((${#files[@]})) || return 0
  uri=$(
    sed -e 's/#.*//' "${files[@]}" |
      awk '/^[[:space:]]*URIs:/ { for (i = 2; i <= NF; i++) print $i }
           /^[[:space:]]*deb[[:space:]]/ { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/ && $i !~ /=/) { print $i; break } }' |
      grep -E '^https?://' | grep -v -- '-security' | grep -E '/debian/?$' | head -n 1
  ) || true
  printf '%s\n' "${uri%/}"
}

free_mb() {
  local d="$1"
  while [[ ! -d "$d" ]]; do d=$(dirname "$d"); done
  df -Pm "$d" | awk 'NR == 2 { print $4 }'
}

build_root() {
  [[ $EUID -eq 0 ]] || cannot_build "must run as root (debootstrap, chroot and mount need it)"
  local mirror
  mirror=$(debian_mirror)
  [[ -n "$mirror" ]] || cannot_build "no Debian mirror found in /etc/apt/sources.list(.d); set $MIRROR_VAR"
  curl -fsS --max-time 20 -o /dev/null "$mirror/dists/$SUITE/Release" 2>/dev/null ||
    cannot_build "Debian mirror $mirror does not serve $SUITE (unreachable or no such suite)"

  if [[ -e "$DIR" ]]; then
    say "removing the half-built chroot $DIR (no $MARKER)"
    node_running && die "a process is still running inside the half-built $DIR; stop it first"
    umount_binds
    if grep -qF " $DIR/" /proc/mounts; then die "something is still mounted under $DIR; unmount it first"; fi
    rm -rf --one-file-system "$DIR"
  fi

  local free
  free=$(free_mb "$DIR")
  ((free >= NEED_MB)) || cannot_build "only ${free} MB free for $DIR, need ${NEED_MB} MB"

  if ! command -v debootstrap >/dev/null; then
    say "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >>"$LOG" 2>&1 ||
      { apt-get update -q >>"$LOG" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >>"$LOG" 2>&1; } ||
      cannot_build "apt-get install debootstrap failed (see $LOG)"
  fi
  # An older debootstrap may not know a newer suite yet; its sid script builds any recent one.
  local script=()
  [[ -e "/usr/share/debootstrap/scripts/$SUITE" ]] || script=(/usr/share/debootstrap/scripts/sid)

  say "debootstrap $SUITE from $mirror into $DIR (about 20 s)"
  mkdir -p "$(dirname "$DIR")"
  debootstrap --variant=minbase "$SUITE" "$DIR" "$mirror" "${script[@]}" >>"$LOG" 2>&1 ||
    cannot_build "debootstrap $SUITE from $mirror failed (see $LOG)"
}

installed_version() { in_root dpkg-query -W -f='${Version}' rabbitmq-server 2>/dev/null; }

install_rabbitmq() {
  if ! in_root dpkg-query -W -f='${Status}' rabbitmq-server 2>/dev/null | grep -q 'install ok installed'; then
    say "installing rabbitmq-server in the chroot (about 15 s)"
    # No service starts during install: the node is started below with our config.
    printf '#!/bin/sh\nexit 101\n' >"$DIR/usr/sbin/policy-rc.d"
    chmod 755 "$DIR/usr/sbin/policy-rc.d"
    cp /etc/resolv.conf "$DIR/etc/resolv.conf" 2>/dev/null || true
    # Check-Valid-Until off: sid's Release expires within a week, and a mirror that is not
    # refreshed (this machine's) serves an expired one; its signature is still checked.
    { in_root apt-get -o Acquire::Check-Valid-Until=false update -q && in_root apt-get install -y -q --no-install-recommends rabbitmq-server; } >>"$LOG" 2>&1 ||
      cannot_build "apt-get install rabbitmq-server in the $SUITE chroot failed (see $LOG)"
  fi
  # A suite that moved on (sid) would give another line than the one this broker stands for.
  local version
  version=$(installed_version) || cannot_build "rabbitmq-server is not installed in $DIR (see $LOG)"
  [[ "$version" == "$WANT_VERSION"* ]] ||
    cannot_build "$SUITE carries rabbitmq-server $version, not $WANT_VERSION*; remove $DIR once a matching suite is found"
}

# Write a file only if its content differs; returns 0 when it changed (or, with
# CHECK_ONLY=1, when it would change, writing nothing).
CHECK_ONLY=0
write_if_changed() {
  local path="$1" content="$2"
  if [[ -f "$path" ]] && [[ "$(cat "$path")" == "$content" ]]; then return 1; fi
  ((CHECK_ONLY)) && return 0
  mkdir -p "$(dirname "$path")"
  printf '%s\n' "$content" >"$path.tmp"
  chmod 644 "$path.tmp"
  mv -f "$path.tmp" "$path"
  return 0
}

configure() {
  local changed=1
  # Environment variables passed to chroot do not reach the node: the Debian wrapper resets
  # them, so node name and ports live in rabbitmq-env.conf.
  write_if_changed "$DIR/etc/rabbitmq/rabbitmq-env.conf" "# written by scripts/$NAME
NODENAME=$NODE
NODE_PORT=$AMQP_PORT
DIST_PORT=$DIST_PORT" && changed=0
  # classic_config with no nodes listed: the node stays standalone and never looks for the
  # other nodes (which it could not join anyway: different Erlang cookie).
  write_if_changed "$DIR/etc/rabbitmq/rabbitmq.conf" "# written by scripts/$NAME
listeners.tcp.default = $AMQP_PORT
management.tcp.port = $MGMT_PORT
cluster_formation.peer_discovery_backend = classic_config" && changed=0
  # Erlang resolves the node's host name through the chroot's own /etc/hosts.
  if ! grep -qE '^127\.0\.0\.1[[:space:]]+(.*[[:space:]])?localhost([[:space:]]|$)' "$DIR/etc/hosts" 2>/dev/null; then
    changed=0
    ((CHECK_ONLY)) || printf '127.0.0.1\tlocalhost\n' >>"$DIR/etc/hosts"
  fi
  return "$changed"
}

# Plugins are kept apart from configure(): a running node enables them online, without the
# restart a config change costs. Federation and shovel with their management plugins: the
# links endpoints (/api/federation-links, /api/shovels) that `rmq links` reads and
# test/integration/federation-links.test.ts proves. scripts/cluster enables the same list.
PLUGINS=(rabbitmq_event_exchange rabbitmq_federation rabbitmq_federation_management rabbitmq_management
  rabbitmq_shovel rabbitmq_shovel_management)
PLUGINS_FILE="[$(IFS=,; printf '%s' "${PLUGINS[*]}")]."
# Every wanted plugin in the file (rabbitmq-plugins writes it in its own order; one enabled by
# hand beside them is left alone). The file: this broker's, or the one named.
plugins_as_wanted() {
  local listed p file=${1:-$DIR/etc/rabbitmq/enabled_plugins}
  listed=$(tr -d '[]. \t\r\n' <"$file" 2>/dev/null | tr ',' '\n') || return 1
  for p in "${PLUGINS[@]}"; do grep -qxF "$p" <<<"$listed" || return 1; done
}
enable_plugins_online() {
  plugins_as_wanted && return 0
  say "enabling ${PLUGINS[*]} on $NODE"
  in_root rabbitmq-plugins -n "$NODE" enable "${PLUGINS[@]}" >>"$LOG" 2>&1 ||
    die "rabbitmq-plugins enable ${PLUGINS[*]} failed (see $LOG)"
}

# Application settings rabbitmq.conf has no key for, in advanced.config, also kept apart from
# configure(): a running node takes them online (application:set_env), without a restart.
# channel_tick_interval (default 60 s) is how often a channel checks its unacknowledged
# deliveries against the consumer timeout: 4.0 checks every queue type there, 4.3 checks none
# (its quorum queues time consumers out themselves). At 1 s the tests of consumer-timeout take
# seconds, not minutes (test/integration/consumer-timeout.test.ts). A channel reads the value
# each time it sets its next tick, so one running when it changes follows within a minute.
CHANNEL_TICK_MS=1000
ADVANCED_FILE="% written by scripts/$NAME
[{rabbit, [{channel_tick_interval, $CHANNEL_TICK_MS}]}]."
advanced_as_wanted() { [[ "$(cat "$DIR/etc/rabbitmq/advanced.config" 2>/dev/null)" == "$ADVANCED_FILE" ]]; }
set_advanced_online() {
  advanced_as_wanted && return 0
  say "setting channel_tick_interval to $CHANNEL_TICK_MS ms on $NODE"
  in_root rabbitmqctl -n "$NODE" eval "ok = application:set_env(rabbit, channel_tick_interval, $CHANNEL_TICK_MS)." >>"$LOG" 2>&1 ||
    die "rabbitmqctl eval application:set_env(rabbit, channel_tick_interval, $CHANNEL_TICK_MS) failed (see $LOG)"
  # Last: the file as wanted says the running node has it too.
  write_if_changed "$DIR/etc/rabbitmq/advanced.config" "$ADVANCED_FILE" || true
}

start_node() {
  say "starting $NODE"
  write_if_changed "$DIR/etc/rabbitmq/enabled_plugins" "$PLUGINS_FILE" || true
  write_if_changed "$DIR/etc/rabbitmq/advanced.config" "$ADVANCED_FILE" || true
  # setsid: the detached node must not belong to the caller's session or process group;
  # 9>&-: nor inherit the lock, which it would hold for as long as it runs.
  setsid env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    chroot "$DIR" rabbitmq-server -detached </dev/null >>"$LOG" 2>&1 9>&- ||
    die "rabbitmq-server -detached failed (see $LOG)"
}

stop_node() {
  node_running || { api_up && die "something answers on $API but no node runs in $DIR"; return 0; }
  say "stopping $NODE"
  in_root rabbitmqctl -n "$NODE" stop >>"$LOG" 2>&1 || say "rabbitmqctl stop failed (see $LOG); waiting anyway"
  local deadline=$((SECONDS + 60))
  while node_running; do
    ((SECONDS < deadline)) || die "$NODE still running 60 s after rabbitmqctl stop"
    sleep 1
  done
}

wait_for_api() {
  local deadline=$((SECONDS + TIMEOUT)) body
  until body=$(overview); do
    if ((SECONDS >= deadline)); then
      die "management API on $API did not answer within ${TIMEOUT} s (logs: $DIR/var/log/rabbitmq/, $LOG)"
    fi
    node_running || die "$NODE exited while starting (logs: $DIR/var/log/rabbitmq/, $LOG)"
    sleep 2
  done
  printf '%s\n' "$body" | version_of
}

cmd_status() {
  local body
  if body=$(overview); then
    echo "RabbitMQ $(printf '%s\n' "$body" | version_of) on $API ($NODE)"
    exit 0
  fi
  echo "$LABEL broker not answering on $API"
  exit 1
}

cmd_stop() {
  [[ -f "$MARKER" ]] || { say "no $LABEL broker built in $DIR; nothing to stop"; exit 0; }
  exec 9>"$LOCK"
  flock -w 300 9 || die "another scripts/$NAME holds $LOCK"
  stop_node
  # Leave the bind mounts only while something still lives in the chroot.
  [[ -z "$(chroot_pids)" ]] && umount_binds
  say "stopped"
}

cmd_up() {
  # Fast path: built, configured as wanted and answering. No lock, no writes.
  local body
  if [[ -f "$MARKER" ]] && ! CHECK_ONLY=1 configure && plugins_as_wanted && advanced_as_wanted && body=$(overview); then
    printf '%s\n' "$body" | version_of
    exit 0
  fi

  [[ $EUID -eq 0 ]] || cannot_build "must run as root (debootstrap, chroot and mount need it)"
  mkdir -p "$(dirname "$DIR")"
  exec 9>"$LOCK"
  flock -w 600 9 || die "another scripts/$NAME holds $LOCK"

  if [[ ! -f "$MARKER" ]]; then
    : >"$LOG"
    build_root
    mount_binds
    install_rabbitmq
    date -u +%FT%TZ >"$MARKER" # last step: a chroot without it is rebuilt
  fi
  mount_binds
  install_rabbitmq

  local changed=no
  if configure; then changed=yes; fi
  if node_running; then
    if [[ $changed == yes ]]; then
      say "config changed; restarting $NODE"
      stop_node
      start_node
    else
      say "$NODE already starting; waiting for its management API"
    fi
  else
    api_up && die "port $MGMT_PORT answers but no node runs in $DIR; refusing to start a second one"
    start_node
  fi
  local version
  version=$(wait_for_api)
  enable_plugins_online
  set_advanced_online
  printf '%s\n' "$version"
}

broker_main() {
  case "${1:-up}" in
    up | start) cmd_up ;;
    status) cmd_status ;;
    stop) cmd_stop ;;
    *) die "usage: scripts/$NAME [up|status|stop]" 2 ;;
  esac
}
