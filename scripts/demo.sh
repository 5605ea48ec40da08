#!/bin/sh
# demo: the README's first command. On Debian 12 with nothing but git and a shell (no
# make, no compiler), as root: installs make, the compilers and every package the
# build and the tests need (scripts/install-deps.sh says what while apt runs), builds
# perfconv and converts the bundled recording (make demo). `make check` then runs
# every test.
set -e
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
exec make demo
