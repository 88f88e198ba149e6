#!/bin/bash
# Test hook: starts a background child, records "<own pid> <child pid>" in $1, then sleeps.
sleep 30 &
echo "$$ $!" > "$1.tmp" && mv "$1.tmp" "$1"
sleep 30
