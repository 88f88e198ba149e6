#!/bin/bash
# Test hook: ignores SIGTERM (so does its child, which inherits the ignored disposition),
# records "<own pid> <child pid>" in $1, then waits.
trap '' TERM
sleep 30 &
echo "$$ $!" > "$1.tmp" && mv "$1.tmp" "$1"
wait
