#!/usr/bin/env bash
# The public library's DocC catalog (Sources/QueryFS/QueryFS.docc), built
# with warnings as errors, and the count of public symbols of every module
# (only QueryFS may have any: the layers below it are `package`).
# Usage: scripts/docs.sh [OUTPUT_DIR]   (default .build/docs; open OUTPUT_DIR/index.html
#   through a web server, or read the symbol pages under OUTPUT_DIR/data)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build/docs}
swift package --allow-writing-to-directory "$out" generate-documentation --target QueryFS \
    --warnings-as-errors --disable-indexing --output-path "$out" --transform-for-static-hosting
# Public symbols per module, from the compiler's symbol graphs (the
# Fuzzing SPI of QueryFSCollection, for Fuzz/ only, is not among them).
swift package dump-symbol-graph --minimum-access-level public >/dev/null
dir=$(swift build --show-bin-path)/../symbolgraph
for module in QueryFS QueryFSEngine QueryFSCollection QueryFSMount; do
    python3 - "$dir/$module.symbols.json" "$module" <<'PY'
import json, sys
path, module = sys.argv[1], sys.argv[2]
try:
    symbols = json.load(open(path))["symbols"]
except FileNotFoundError:
    symbols = []
public = [s for s in symbols if s.get("accessLevel") in ("public", "open") and not s.get("spi")]
declared = [s for s in public if "::SYNTHESIZED::" not in s["identifier"]["precise"]]
print(f"public symbols in {module}: {len(declared)} declared, {len(public)} with those its conformances bring")
if module != "QueryFS" and public:
    print("  " + "\n  ".join(sorted(".".join(s["pathComponents"]) for s in public)[:20]))
    sys.exit(1)
PY
done
echo "documentation: $out"
