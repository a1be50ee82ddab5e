#!/bin/sh
# Install Debian's Chromium for the report tests (tests/report) when it is missing.
# Idempotent and quiet: does nothing when /usr/bin/chromium exists.  Needs root (or sudo).
set -eu
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "ensure_chromium.sh: chromium is missing and this user cannot install it (run as root)" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq chromium fonts-liberation >/dev/null
test -x /usr/bin/chromium
