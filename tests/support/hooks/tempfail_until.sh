#!/bin/bash
# Test hook: counts its runs in the file $1 and exits 75 (EX_TEMPFAIL) until run number $2.
n=$(cat "$1" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$1"
echo "attempt $n"
if [ "$n" -lt "$2" ]; then exit 75; fi
exit 0
