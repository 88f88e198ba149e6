#!/bin/bash
# Test hook: writes $1 bytes to stdout, then exits 0.
head -c "$1" /dev/zero | tr '\0' 'x'
