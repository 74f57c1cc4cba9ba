#!/usr/bin/env bash
# Runs every test: the engine's unit tests and the integration tests, which
# really mount (root or a user allowed to use /dev/fuse). A test that cannot
# mount fails; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh fio attr
swift build
# XCTest only: Swift Testing would close the output with a "0 tests" line.
swift test --disable-swift-testing "$@"
