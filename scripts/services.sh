#!/usr/bin/env bash
# Install and start what the test suite talks to: a Docker engine (Debian's
# docker.io, with busybox-static for the locally built sandbox images), the
# PostgreSQL server binaries, and Node (Debian's nodejs and npm) with the
# official TypeScript MCP SDK client in tests/clients/ts and the third-party
# MCP servers in tests/servers/node. moto_server and the PostgreSQL cluster
# itself are started by pytest fixtures on loopback, in temporary directories.
set -euo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }
missing=()
have dockerd || missing+=(docker.io)
[ -x /bin/busybox ] && file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' || missing+=(busybox-static)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
have file || missing+=(file)
have node || missing+=(nodejs)
have npm || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "services: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "services: not root, cannot install ${missing[*]}; tests needing them will skip" >&2
  fi
fi

if have dockerd && ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "services: starting dockerd"
    nohup dockerd >/tmp/colony-dockerd.log 2>&1 &
    for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    docker info >/dev/null 2>&1 || { echo "services: dockerd did not start; see /tmp/colony-dockerd.log" >&2; exit 1; }
  else
    echo "services: no Docker engine running and not root to start one" >&2
  fi
fi
# The TypeScript client's packages and the third-party MCP servers the tests govern, exactly
# as each package-lock.json pins them. Skipped when the installed tree is newer than the lock
# file, so a machine without network still runs.
if have npm; then
  for packages in tests/clients/ts tests/servers/node; do
    if [ "$packages/node_modules/.package-lock.json" -nt "$packages/package-lock.json" ]; then
      echo "services: $packages is installed"
    else
      echo "services: npm ci in $packages"
      if ! (cd "$packages" && npm ci --no-audit --no-fund --loglevel=error); then
        echo "services: npm ci failed in $packages; the tests that need it cannot run" >&2
        [ "${COLONY_REQUIRE_SERVICES:-}" = 1 ] && exit 1
      fi
    fi
  done
else
  echo "services: no npm; the TypeScript MCP client and third-party server tests will skip" >&2
fi
echo "services: ready"
