#!/usr/bin/env bash
# Rebuilds the dashboard's vendored front-end files from the versions pinned
# in package.json / package-lock.json, and copies them where go:embed finds
# them. The copies are committed, so `go run` and `go build` need no npm;
# run this only after changing a version, then commit the result.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
out=../internal/web/static/vendor
mkdir -p "$out"
cp node_modules/uplot/dist/uPlot.iife.min.js node_modules/uplot/dist/uPlot.min.css "$out/"
cp node_modules/uplot/LICENSE "$out/uPlot.LICENSE"
echo "copied uPlot $(node -p 'require("./node_modules/uplot/package.json").version') to $out"
