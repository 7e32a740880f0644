#!/bin/sh
# install-pkg.sh — make the servers ratecheck's real-server targets and tests
# run (nginx, haproxy, …) available, from Debian/Ubuntu packages.
#
# Usage: scripts/install-pkg.sh [--dry-run] BINARY[=PACKAGE]...
#   nginx=nginx-light   the binary nginx, from the package nginx-light
#   haproxy             the binary haproxy, from the package of that name
#
# Idempotent: a binary already on PATH or in /usr/sbin is left alone, and
# when every one is there the script exits 0 at once, touching nothing.
# Otherwise it installs the missing packages with apt-get in one go.
# ratecheck never uses a system service: it starts its own server on a
# loopback port from a private directory, so the service a package's
# postinst may start (named like its binary) is stopped again here.
# --dry-run prints the commands instead of running them.
set -eu

me=install-pkg.sh
dry=false
run() { "$@"; }
if [ "${1-}" = "--dry-run" ]; then
	dry=true
	run() { echo "would run:" "$@"; }
	shift
fi
if [ $# -eq 0 ]; then
	echo "usage: $me [--dry-run] BINARY[=PACKAGE]... (e.g. $me nginx=nginx-light haproxy)" >&2
	exit 2
fi

have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }

missing_bins=""
missing_pkgs=""
for spec in "$@"; do
	bin=${spec%%=*}
	pkg=${spec#*=}
	if [ -z "$bin" ] || [ -z "$pkg" ]; then
		echo "$me: bad argument \"$spec\": want BINARY or BINARY=PACKAGE (e.g. nginx=nginx-light)" >&2
		exit 2
	fi
	if ! have "$bin"; then
		missing_bins="$missing_bins $bin"
		missing_pkgs="$missing_pkgs $pkg"
	fi
done
[ -n "$missing_pkgs" ] || exit 0

if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "$me:$missing_bins not installed and we are not root (no sudo available)." >&2
	echo "Install as root with:" >&2
	echo "  apt-get update && apt-get install -y$missing_pkgs   # Debian/Ubuntu" >&2
	echo "or your platform's packages (e.g. apk add, dnf install, brew install)." >&2
	exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "$me: apt-get not found; install$missing_pkgs with your platform's package manager." >&2
	exit 1
fi

# $SUDO and the package lists are split into words on purpose.
# shellcheck disable=SC2086
run $SUDO apt-get update -qq
# shellcheck disable=SC2086
run $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing_pkgs

status=0
for bin in $missing_bins; do
	# The postinst may have started a system server (nginx on port 80). We
	# never rely on it; stop it so it neither holds a port nor gets mistaken
	# for ours.
	if $dry; then
		run $SUDO service "$bin" stop
	else
		$SUDO service "$bin" stop >/dev/null 2>&1 || true
	fi
	if ! $dry && ! have "$bin"; then
		echo "$me: installation finished but no $bin binary was found" >&2
		status=1
	fi
done
exit $status
