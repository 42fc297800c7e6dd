#!/bin/sh
# Runs test files of the page's modules (viewer/report/assets/js/) under
# node's own runner (node:test): exit 77, saying why, where node (18 or
# later) is not there; CI runners need not have it.
#   run.sh FILE.test.mjs...
if ! command -v node >/dev/null 2>&1; then
	echo "SKIP: no node on PATH: the page's modules are not run here"
	exit 77
fi
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'; then
	echo "SKIP: node $(node --version) is older than 18 (node:test)"
	exit 77
fi
exec node --test "$@"
