#!/usr/bin/env bash
# Install and start what the test suite talks to: a Docker engine (Debian's
# docker.io, with busybox-static for the locally built sandbox images) and the
# PostgreSQL server binaries. moto_server and the PostgreSQL cluster itself are
# started by pytest fixtures on loopback, in temporary directories.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }
missing=()
have dockerd || missing+=(docker.io)
[ -x /bin/busybox ] && file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' || missing+=(busybox-static)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
have file || missing+=(file)

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
echo "services: ready"
