#!/bin/bash
# Test hook: leaves a detached child that keeps stdout/stderr open, records its pid in $1,
# writes $2 bytes (default 0) and "started", and exits 0 at once.
setsid sleep 30 &
echo "$!" > "$1.tmp" && mv "$1.tmp" "$1"
head -c "${2:-0}" /dev/zero | tr '\0' 'y'
echo "started"
exit 0
