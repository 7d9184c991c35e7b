#!/usr/bin/env bash
# Builds the DocC documentation of Coffer and CofferSync into .build/docs (one archive each)
# and fails on any DocC warning: an unresolved link, a documented parameter that does not
# exist, an article that names a missing symbol.
#
#   Scripts/build-docs.sh            uses the debug build (builds it when needed)
#
# Open the result with `docc preview Sources/Coffer/Coffer.docc --additional-symbol-graph-dir
# .build/docs/symbols/Coffer`, or host .build/docs/<Module>.doccarchive (static hosting).
set -euo pipefail
cd "$(dirname "$0")/.."
docc=$(command -v docc || xcrun --find docc)
mkdir -p .build
if ! swift package dump-symbol-graph --minimum-access-level public > .build/dump-symbol-graph.log 2>&1; then
    cat .build/dump-symbol-graph.log >&2
    exit 1
fi
graphs=$(sed -n 's/^Files written to //p' .build/dump-symbol-graph.log | tail -1)
[ -d "$graphs" ] || graphs=$(ls -d .build/*/symbolgraph 2> /dev/null | head -1 || true)
[ -d "$graphs" ] || { echo "no symbol graphs found (see .build/dump-symbol-graph.log)" >&2; exit 1; }
for module in Coffer CofferSync; do
    symbols=.build/docs/symbols/$module
    rm -rf "$symbols" ".build/docs/$module.doccarchive"
    mkdir -p "$symbols"
    cp "$graphs/$module.symbols.json" "$symbols/"
    for extension in "$graphs/$module"@*.symbols.json; do
        if [ -e "$extension" ]; then cp "$extension" "$symbols/"; fi
    done
    "$docc" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$symbols" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.coffer.$module" \
        --transform-for-static-hosting --hosting-base-path "$module" \
        --warnings-as-errors \
        --output-path ".build/docs/$module.doccarchive"
done
echo "documentation: .build/docs/Coffer.doccarchive, .build/docs/CofferSync.doccarchive"
