# shellcheck shell=bash
# A RabbitMQ node with no optional plugin but the management and event exchange ones (no
# federation, no shovel), run from the packages of a chroot broker's chroot (no second
# debootstrap) with a home of its own there, beside every other broker of the machine, all left
# alone. Sourced by scripts/broker-plain (from scripts/broker-4's 4.0 chroot) and
# scripts/broker-plain-4.3 (from scripts/broker-4.3's 4.3 chroot), which set:
#
#   NAME          script name, for messages and the config files' first line (broker-plain)
#   DIR           the chroot directory
#   CHROOT        the script that builds that chroot and runs its own broker (broker-4)
#   LINE          the line the chroot carries, for messages (4.0)
#   SUITE WANT_VERSION NODE AMQP_PORT DIST_PORT MGMT_PORT TIMEOUT MIRROR MIRROR_VAR
#                 as for lib/chroot-broker.bash
#   HOME_DIR      the node's home inside the chroot: config, enabled plugins, data, log, and its
#                 own Erlang cookie, so the chroot's own broker (/var/lib/rabbitmq, another
#                 cookie) and the other nodes there are neither read nor touched
#   STEM          the name of its log and lock beside the chroot (plain: DIR/../plain.log)
#
# then call plain_main "$@". Each one's stop leaves the chroot's mounts while another node runs
# there (chroot_pids).
#
# Exit codes: 0 ok; 3 the node cannot be built here (no root, or the chroot cannot be built:
# callers skip its tests); anything else non-zero is another failure, with a message on stderr.

LABEL="plugin-less RabbitMQ $LINE"
SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=chroot-broker.bash
source "$(dirname "${BASH_SOURCE[0]}")/chroot-broker.bash"
LOG="${DIR%/root}/$STEM.log"
LOCK="${DIR%/root}/$STEM.lock"
BUILT="$DIR/.$CHROOT-built"

node_up() { home_pid "$HOME_DIR" >/dev/null; }

# Returns 0 when a file changed (with CHECK_ONLY=1, would change). The plugins file is rewritten
# whenever it differs: one enabled on this node by hand is turned off again (by a restart).
configure_plain() {
  local changed=1
  write_home_env "$HOME_DIR" "$NODE" "$AMQP_PORT" "$DIST_PORT" && changed=0
  write_if_changed "$DIR$HOME_DIR/rabbitmq.conf" "# written by scripts/$NAME
listeners.tcp.default = $AMQP_PORT
management.tcp.port = $MGMT_PORT
cluster_formation.peer_discovery_backend = classic_config" && changed=0
  write_if_changed "$DIR$HOME_DIR/enabled_plugins" "[rabbitmq_event_exchange,rabbitmq_management]." && changed=0
  write_if_changed "$DIR$HOME_DIR/advanced.config" "[]." && changed=0
  return "$changed"
}

prepare() {
  [[ $EUID -eq 0 ]] || cannot_build "must run as root (chroot and mount need it)"
  if [[ ! -f "$BUILT" ]]; then
    say "the $LINE chroot is not built yet; scripts/$CHROOT builds it"
    local rc=0
    "$SCRIPTS/$CHROOT" >&2 || rc=$?
    ((rc == 0)) || { ((rc == 3)) && cannot_build "scripts/$CHROOT cannot build its chroot"; die "scripts/$CHROOT failed (exit $rc)" "$rc"; }
  fi
  local version
  version=$(installed_version) || cannot_build "rabbitmq-server is not installed in $DIR"
  [[ "$version" == "$WANT_VERSION"* ]] || cannot_build "the chroot carries rabbitmq-server $version, not $WANT_VERSION*"
  mount_binds
}

stop_plain() {
  node_up || { api_up && die "something answers on $API but $NODE does not run in $DIR"; return 0; }
  say "stopping $NODE"
  as_home "$HOME_DIR" /usr/lib/rabbitmq/bin/rabbitmqctl -n "$NODE" stop >>"$LOG" 2>&1 ||
    say "rabbitmqctl stop failed (see $LOG); waiting anyway"
  local deadline=$((SECONDS + 60))
  while node_up; do
    ((SECONDS < deadline)) || die "$NODE still running 60 s after rabbitmqctl stop"
    sleep 0.5
  done
}

cmd_up_plain() {
  # Fast path: configured as wanted and answering. No lock, no writes.
  local body
  if [[ -f "$BUILT" ]] && ! CHECK_ONLY=1 configure_plain && body=$(overview); then
    printf '%s\n' "$body" | version_of
    exit 0
  fi

  prepare
  exec 9>"$LOCK"
  flock -w 600 9 || die "another scripts/$NAME holds $LOCK"
  mkdir -p "$DIR$HOME_DIR/data" "$DIR$HOME_DIR/log"
  make_cookie_file "$DIR$HOME_DIR/.erlang.cookie"
  local changed=no
  if configure_plain; then changed=yes; fi
  in_root chown -R rabbitmq:rabbitmq "$HOME_DIR"
  chmod 400 "$DIR$HOME_DIR/.erlang.cookie"
  if node_up && [[ $changed == yes ]]; then
    say "config changed; restarting $NODE"
    stop_plain
  fi
  if node_up; then
    say "$NODE already starting; waiting for its management API"
  else
    api_up && die "port $MGMT_PORT answers but $NODE does not run in $DIR; refusing to start a second one"
    say "starting $NODE"
    start_home "$HOME_DIR" || die "rabbitmq-server -detached failed (see $LOG)"
  fi
  local deadline=$((SECONDS + TIMEOUT))
  until body=$(overview); do
    ((SECONDS < deadline)) || die "management API on $API did not answer within ${TIMEOUT} s (logs: $DIR$HOME_DIR/log, $LOG)"
    node_up || die "$NODE exited while starting (logs: $DIR$HOME_DIR/log, $LOG)"
    sleep 1
  done
  printf '%s\n' "$body" | version_of
}

cmd_stop_plain() {
  [[ -f "$BUILT" ]] || { say "no $LINE chroot built in $DIR; nothing to stop"; exit 0; }
  exec 9>"$LOCK"
  flock -w 300 9 || die "another scripts/$NAME holds $LOCK"
  stop_plain
  # The chroot's own broker (scripts/$CHROOT) or other nodes may still live there: its mounts stay then.
  [[ -z "$(chroot_pids)" ]] && umount_binds
  say "stopped"
}

plain_main() {
  case "${1:-up}" in
    up | start) cmd_up_plain ;;
    status) cmd_status ;;
    stop) cmd_stop_plain ;;
    *) die "usage: scripts/$NAME [up|status|stop]" 2 ;;
  esac
}
