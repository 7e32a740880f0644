#!/bin/sh
# install-redis.sh — make redis-server available for ratecheck's
# builtin:fleet?store=redis targets and the targets/fleet and grade tests.
#
# Idempotent: exits 0 at once when redis-server is already installed.
# Otherwise it installs Debian/Ubuntu's redis-server. ratecheck never uses
# the system Redis service: it starts its own redis-server on a free loopback
# port without persistence and stops it at the end, so the service the
# package's postinst may start is stopped again here.
set -eu

if command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ]; then
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "install-redis.sh: redis-server is not installed and we are not root (no sudo available)." >&2
	echo "Install it as root with:" >&2
	echo "  apt-get update && apt-get install -y redis-server   # Debian/Ubuntu" >&2
	echo "or your platform's package (e.g. 'apk add redis', 'dnf install redis', 'brew install redis')." >&2
	exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-redis.sh: apt-get not found; install redis-server with your platform's package manager." >&2
	exit 1
fi

$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server

# The package's postinst may have started a system Redis on port 6379. We
# never rely on it; stop it so it neither holds the port nor gets mistaken
# for ours.
$SUDO service redis-server stop >/dev/null 2>&1 || true

if command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ]; then
	exit 0
fi
echo "install-redis.sh: installation finished but no redis-server binary was found" >&2
exit 1
