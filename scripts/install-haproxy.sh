#!/bin/sh
# install-haproxy.sh — make an haproxy binary available for ratecheck's
# haproxy:PATH targets, the targets/haproxy tests and the real-world corpus.
#
# Idempotent: exits 0 at once when haproxy is already installed. Otherwise it
# installs Debian/Ubuntu's haproxy package. ratecheck never uses the system
# haproxy service: it starts its own haproxy on a loopback port from a
# private directory, so the service the package's postinst may start is
# stopped again here.
set -eu

if command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; then
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "install-haproxy.sh: haproxy is not installed and we are not root (no sudo available)." >&2
	echo "Install it as root with:" >&2
	echo "  apt-get update && apt-get install -y haproxy   # Debian/Ubuntu" >&2
	echo "or your platform's haproxy package (e.g. 'apk add haproxy', 'dnf install haproxy', 'brew install haproxy')." >&2
	exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-haproxy.sh: apt-get not found; install haproxy with your platform's package manager." >&2
	exit 1
fi

$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy

# The package's postinst may have started a system haproxy (its default
# config listens on no port, but it runs). We never rely on it; stop it.
$SUDO service haproxy stop >/dev/null 2>&1 || true

if command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; then
	exit 0
fi
echo "install-haproxy.sh: installation finished but no haproxy binary was found" >&2
exit 1
