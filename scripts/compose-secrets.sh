#!/usr/bin/env bash
# The compose deployment's secrets (docker-compose.yml), made once with random values and never
# overwritten: in ${TOCSIN_COMPOSE_SECRETS:-deploy/compose/secrets} (or the directory given),
#   token-signing.key   the token signing key (43 characters, base64url)
#   postgres.pgpass     `*:*:*:tocsin:PASSWORD` (PGPASSFILE format) for the database role `tocsin`
# owned by uid 10001 (the images' `tocsin` user) with mode 0600: compose mounts them as they are,
# and libpq/asyncpg refuse a password file that others can read. Run as root (chown).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${TOCSIN_COMPOSE_SECRETS:-deploy/compose/secrets}}
uid=10001
mkdir -p "$dir" && chmod 0700 "$dir"
random() { head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'; }
make_secret() {  # make_secret FILE CONTENT
  if [[ -s $1 ]]; then echo "compose-secrets: $1 exists; kept" >&2; return 0; fi
  (umask 077 && printf '%s\n' "$2" >"$1")
  chown "$uid:$uid" "$1" && chmod 0600 "$1"
  echo "compose-secrets: made $1" >&2
}
make_secret "$dir/token-signing.key" "$(random)"
make_secret "$dir/postgres.pgpass" "*:*:*:tocsin:$(random)"
