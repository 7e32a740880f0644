#!/bin/sh
# install-haproxy.sh — make an haproxy binary available for ratecheck's haproxy:PATH
# targets and the targets/haproxy tests (the README names this script).
# install-pkg.sh does the work: it installs the Debian/Ubuntu package only
# when the binary is missing, and stops the system service it may start.
exec "$(dirname "$0")/install-pkg.sh" "$@" haproxy
