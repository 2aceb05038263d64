# pg_env.sh: sourced by run.sh and sharing.sh (from the repository root). pg_env_start
# PREFIX makes the work folder WORK (/tmp/PREFIX.XXXXXX), starts one PostgreSQL there
# (tests/integration/dd_pg.py: Debian's postgresql 15, loopback, fsync off) and sets
# PG_URL, writes the two key files ($WORK/secret.key, $WORK/url.key) and exports a fresh
# DELTAD_ADMIN_TOKEN. On exit every pid in PIDS gets SIGTERM (and is waited for), then
# PostgreSQL stops and WORK is removed.
PIDS=()
pg_env_cleanup() {
  for p in "${PIDS[@]}"; do
    if kill -0 "$p" 2>/dev/null; then kill -TERM "$p"; wait "$p" || true; fi
  done
  /usr/bin/python3 tests/integration/dd_pg.py stop "$WORK/pg" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
pg_env_start() {
  WORK=$(mktemp -d "/tmp/$1.XXXXXX")
  trap pg_env_cleanup EXIT
  /usr/bin/python3 tests/integration/dd_pg.py start "$WORK/pg" >/dev/null
  PG_URL=$(cat "$WORK/pg/url")
  head -c 32 /dev/urandom >"$WORK/secret.key"
  head -c 32 /dev/urandom >"$WORK/url.key"
  chmod 600 "$WORK/secret.key" "$WORK/url.key"
  export DELTAD_ADMIN_TOKEN
  DELTAD_ADMIN_TOKEN=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
}
