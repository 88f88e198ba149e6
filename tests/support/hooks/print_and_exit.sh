#!/bin/bash
# Test hook: writes one line to stdout and one to stderr, then exits with $1 (default 0).
echo "to stdout"
echo "to stderr" >&2
exit "${1:-0}"
