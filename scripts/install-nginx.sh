#!/bin/sh
# install-nginx.sh — make an nginx binary available for ratecheck's nginx:PATH
# targets and the targets/nginx tests (the README names this script).
# install-pkg.sh does the work: it installs the Debian/Ubuntu package only
# when the binary is missing, and stops the system service it may start.
exec "$(dirname "$0")/install-pkg.sh" "$@" nginx=nginx-light
