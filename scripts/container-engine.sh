#!/usr/bin/env bash
# A container engine for the compose deployment and its test (`make compose-test`), on Debian as root:
#   scripts/container-engine.sh up     install docker.io, docker-compose and debootstrap if missing, start
#                                      dockerd if none answers (recording that it did), and build the base
#                                      image tocsin-base:bookworm with debootstrap unless it exists
#   scripts/container-engine.sh down   stop dockerd if `up` started it (only then)
# No registry image is used: the base image is Debian bookworm (minbase) built from Debian's packages,
# imported as tocsin-base:bookworm; the Dockerfile builds everything else on it.
# Exit status 3 means "no container engine can run here" (with the evidence on stderr).
set -euo pipefail

STATE_DIR=${TOCSIN_ENGINE_STATE_DIR:-/run/tocsin-engine}
BASE_IMAGE=${TOCSIN_BASE_IMAGE:-tocsin-base:bookworm}
SUITE=bookworm
MIRROR=${TOCSIN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
NO_ENGINE=3

say() { echo "container-engine: $*" >&2; }
cannot() { say "no container engine can run here: $*"; exit "$NO_ENGINE"; }

engine_answers() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

install_packages() {
  local want=()
  command -v dockerd >/dev/null 2>&1 || want+=(docker.io)
  command -v docker-compose >/dev/null 2>&1 || want+=(docker-compose)
  command -v debootstrap >/dev/null 2>&1 || want+=(debootstrap)
  [[ ${#want[@]} -eq 0 ]] && return 0
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    cannot "${want[*]} missing and this is not Debian as root (apt-get, uid $(id -u)): install them (Debian names)"
  fi
  say "installing ${want[*]}"
  # Keep the packages' scripts from starting a daemon of their own: this script starts (and stops) it.
  local policy=/usr/sbin/policy-rc.d created=0
  if [[ ! -e $policy ]]; then printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null \
    || { [[ $created -eq 1 ]] && rm -f "$policy"; cannot "apt-get install ${want[*]} failed"; }
  [[ $created -eq 1 ]] && rm -f "$policy"
  return 0
}

start_engine() {
  if engine_answers; then
    say "a Docker engine already answers ($(docker version --format '{{.Server.Version}}')); using it"
    return 0
  fi
  [[ $(id -u) -eq 0 ]] || cannot "no engine answers on the Docker socket and starting dockerd needs root (uid $(id -u))"
  mkdir -p "$STATE_DIR"
  local log="$STATE_DIR/dockerd.log"
  say "starting dockerd (log: $log)"
  # setsid: dockerd outlives this script and `down` stops it by its pid
  setsid dockerd --pidfile "$STATE_DIR/dockerd.pid" >"$log" 2>&1 < /dev/null &
  echo $! >"$STATE_DIR/started-by-us"
  local deadline=$((SECONDS + 60))
  until engine_answers; do
    if ! kill -0 "$(cat "$STATE_DIR/started-by-us")" 2>/dev/null; then
      rm -f "$STATE_DIR/started-by-us"
      cannot "dockerd exited during start; its log ends with:
$(tail -n 15 "$log")"
    fi
    if ((SECONDS > deadline)); then
      stop_engine
      cannot "dockerd did not answer within 60 s; its log ends with:
$(tail -n 15 "$log")"
    fi
    sleep 0.5
  done
  # the evidence that a container runs (host networking) comes with the base image below
  say "dockerd $(docker version --format '{{.Server.Version}}') ready"
}

stop_engine() {
  local marker="$STATE_DIR/started-by-us"
  [[ -f $marker ]] || { say "dockerd was not started by this script; leaving it"; return 0; }
  local pid; pid=$(cat "$marker")
  if kill -0 "$pid" 2>/dev/null; then
    say "stopping dockerd (pid $pid), which this script started"
    kill -TERM "$pid"
    local deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null; do
      if ((SECONDS > deadline)); then say "dockerd did not stop in 30 s; killing it"; kill -KILL "$pid"; fi
      sleep 0.5
    done
  fi
  rm -f "$marker"
}

build_base() {
  if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    say "$BASE_IMAGE exists; not rebuilt (docker rmi $BASE_IMAGE to rebuild)"
    return 0
  fi
  local root; root=$(mktemp -d /var/tmp/tocsin-rootfs.XXXXXX)
  say "building $BASE_IMAGE with debootstrap ($SUITE, minbase, from $MIRROR)"
  local started=$SECONDS
  if ! debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$root" "$MIRROR" >"$root.log" 2>&1; then
    tail -n 20 "$root.log" >&2
    rm -rf "$root" "$root.log"
    cannot "debootstrap failed (above)"
  fi
  rm -f "$root.log"
  # The host's own CAs (/usr/local/share/ca-certificates: a company's, or an egress proxy's that
  # re-signs TLS, as on the machine this was written on) are trusted in the image too, so its builds
  # reach PyPI and Maven Central the way the host does; Java's keystore is made from them later.
  local extra=(/usr/local/share/ca-certificates/*.crt)
  if [[ -e ${extra[0]} ]]; then
    say "the image trusts the host's local CAs too: ${extra[*]##*/}"
    cp "${extra[@]}" "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null
  fi
  # the same sources the image's apt-get uses; no package cache or lists kept in the image
  printf 'deb %s %s main\ndeb %s %s-updates main\ndeb http://deb.debian.org/debian-security %s-security main\n' \
    "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" "$SUITE" >"$root/etc/apt/sources.list"
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | docker import --change 'CMD ["/bin/bash"]' - "$BASE_IMAGE" >/dev/null
  rm -rf "$root"
  say "$BASE_IMAGE built in $((SECONDS - started)) s"
  # evidence that a container runs here, with host networking
  docker run --rm --network host "$BASE_IMAGE" true \
    || cannot "dockerd runs but a container with host networking does not start"
}

case "${1:-up}" in
  up) install_packages; start_engine; build_base ;;
  down) stop_engine ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
