#!/usr/bin/env bash
# Installs with apt-get (as root, on Debian) the programs `npm test` needs beyond Node.js and npm; .ci/run runs
# it, and `npm test` names it when tools/scripts/toolchains.mjs finds one missing. Installs only what is missing.
set -uo pipefail
if command -v apt-get >/dev/null 2>&1; then
  need=()
  # The plugin author guides' quick starts (run literally by e2e-guides) call curl.
  command -v curl >/dev/null 2>&1 || need+=(curl)
  command -v unzip >/dev/null 2>&1 || need+=(unzip)
  command -v zip >/dev/null 2>&1 || need+=(zip)
  command -v openssl >/dev/null 2>&1 || need+=(openssl)
  # Debian's Chromium for the admin app's browser tests (e2e/admin drives it with Playwright).
  [ -x /usr/lib/chromium/chromium ] || need+=(chromium)
  # The Python packer installs requirements.txt with pip (python3 -m pip); Debian ships it apart.
  if command -v python3 >/dev/null 2>&1 && ! python3 -m pip --version >/dev/null 2>&1; then need+=(python3-pip); fi
  # The Python SDK's wheel is installed into a fresh virtual environment in its tests (Debian ships venv apart).
  if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then need+=(python3-venv); fi
  # The Python SDK's type hints are checked with mypy when it is there (Debian's python3-mypy).
  if ! python3 -m mypy --version >/dev/null 2>&1 && ! /usr/bin/python3 -m mypy --version >/dev/null 2>&1; then need+=(python3-mypy); fi
  # bubblewrap: the strongest plugin isolation mode (docs/operator/security.md, "Isolation modes"); e2e/runtime's
  # isolation test runs a hostile plugin in it when CI runs as root.
  command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
  # A real PostgreSQL server for the SQL store's tests: each suite runs initdb and pg_ctl into a temporary
  # directory of its own (libs/host-store/src/testing/postgres-server.ts), so only the programs are needed.
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || need+=(postgresql)
  if [ ${#need[@]} -gt 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}") >/dev/null 2>&1 \
      || echo "warning: could not install ${need[*]}"
  fi
  # The Go SDK needs Go 1.23 or newer: bookworm's golang-go is 1.19, so take golang-1.23-go from
  # bookworm-backports (adding that source when it is missing). Its binary is /usr/lib/go-1.23/bin/go,
  # which libs/plugin-sdk-go/toolchain finds without PATH changes.
  if [ ! -x /usr/lib/go-1.23/bin/go ] && ! (command -v go >/dev/null 2>&1 && go version | grep -Eq 'go1\.(2[3-9]|[3-9][0-9])'); then
    if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/ && grep -qs 'bookworm' /etc/os-release; then
      echo 'deb http://deb.debian.org/debian bookworm-backports main' >/etc/apt/sources.list.d/bookworm-backports.list 2>/dev/null \
        || echo "warning: could not add bookworm-backports"
    fi
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-1.23-go) >/dev/null 2>&1 \
      || echo "warning: could not install golang-1.23-go (the Go SDK's tests will fail)"
  fi
fi
