#!/bin/bash
# Container HEALTHCHECK (deploy/Dockerfile): exit 0 when GET PATH on 127.0.0.1:PORT answers 200.
# Plain bash (/dev/tcp), so the runtime image needs no HTTP client package.
# usage: glassbox-healthcheck PORT PATH
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: glassbox-healthcheck PORT PATH" >&2
  exit 2
fi
exec 3<>"/dev/tcp/127.0.0.1/$1"
printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$2" >&3
read -r -t 3 status <&3
case "$status" in
  "HTTP/1.1 200 "*) exit 0 ;;
  *) echo "glassbox-healthcheck: $2 answered: ${status:-nothing}" >&2; exit 1 ;;
esac
