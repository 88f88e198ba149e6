#!/bin/bash
# Test hook: writes what it was started with to the file $1: its argv (one "ARG:" line each),
# its environment exactly as execve gave it (from /proc, so nothing bash adds), then its stdin.
out=$1
{
  for a in "$@"; do printf 'ARG:%s\n' "$a"; done
  tr '\0' '\n' < /proc/$$/environ | sed 's/^/ENV:/'
  echo "STDIN:"
  cat
} > "$out"
