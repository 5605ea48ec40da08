#!/bin/bash
# e2e_outputs: every output of the self-contained committed recordings is the one
# tests/outputs.sha256 holds (scripts/output-digests.sh): a change of the code that
# changes an output fails here until `make outputs-update` records it, and its commit
# says why. Run with an empty HOME and build-id cache: the same on any machine.
source "$(dirname "$0")/e2e_lib.sh"
scripts/output-digests.sh "$PERFCONV" >"$TMP/digests.out" 2>&1
rc=$?
last=$(tail -1 "$TMP/digests.out")
if [ $rc = 0 ] && grep -q "^output-digests: \([0-9]*\) of \1 outputs" <<<"$last"; then
	ok "$last"
else
	bad "$last; these differ (make outputs-update records them, if meant):"
	grep '^DIFF\|^FAIL' "$TMP/digests.out" | head -20
fi
finish e2e_outputs
