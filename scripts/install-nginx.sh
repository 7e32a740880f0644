#!/bin/sh
# install-nginx.sh — make an nginx binary available for ratecheck's nginx:PATH
# targets and the targets/nginx tests.
#
# Idempotent: exits 0 at once when nginx is already installed. Otherwise it
# installs Debian/Ubuntu's nginx-light. ratecheck never uses the system nginx
# service: it starts its own nginx on a loopback port with a private prefix,
# so the service the package's postinst may start is stopped again here.
set -eu

if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "install-nginx.sh: nginx is not installed and we are not root (no sudo available)." >&2
	echo "Install it as root with:" >&2
	echo "  apt-get update && apt-get install -y nginx-light   # Debian/Ubuntu" >&2
	echo "or your platform's nginx package (e.g. 'apk add nginx', 'dnf install nginx', 'brew install nginx')." >&2
	exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-nginx.sh: apt-get not found; install nginx with your platform's package manager." >&2
	exit 1
fi

$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light

# The package's postinst may have started a system nginx on port 80. We never
# rely on it; stop it so it neither holds port 80 nor gets mistaken for ours.
$SUDO service nginx stop >/dev/null 2>&1 || true

if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
	exit 0
fi
echo "install-nginx.sh: installation finished but no nginx binary was found" >&2
exit 1
