#!/usr/bin/env bash
# Installs the system packages Tocsin's real components need, if missing:
# Java 17 + Maven (Kafka broker), PostgreSQL server (store tests), promtool from Debian's prometheus
# package (the deploy/prometheus checks), Debian's prometheus-alertmanager (the Alertmanager receiver's
# e2e test runs the real one), wrk (benchmarks, with --bench),
# Chromium from Debian (the console's browser tests: Playwright with executable_path=/usr/bin/chromium, no download).
# Debian/Ubuntu as root; elsewhere it says what to install and exits non-zero.
set -euo pipefail

want=()
command -v java >/dev/null 2>&1 || want+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || want+=(maven)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || want+=(postgresql)
command -v promtool >/dev/null 2>&1 || want+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || want+=(prometheus-alertmanager)
[[ -x /usr/bin/chromium ]] || want+=(chromium)
if [[ "${1:-}" == "--bench" ]]; then
  command -v wrk >/dev/null 2>&1 || want+=(wrk)
fi
[[ ${#want[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: please install: ${want[*]} (Debian names); Java 17 and Maven run the Kafka broker," >&2
  echo "system-deps: PostgreSQL serves the store tests, promtool (prometheus) checks deploy/prometheus, prometheus-alertmanager sends to the Alertmanager receiver in its e2e test, wrk drives the benchmarks, chromium runs the console's browser tests." >&2
  exit 1
fi

echo "system-deps: installing ${want[*]}" >&2
# Keep package scripts from starting a PostgreSQL cluster (or a Prometheus server, or an Alertmanager) of their own:
# the tests start (and stop) the servers they need, and nothing may be left listening.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && created_policy=1
fi
trap '[[ $created_policy -eq 1 ]] && rm -f "$policy"' EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
echo "system-deps: done" >&2
