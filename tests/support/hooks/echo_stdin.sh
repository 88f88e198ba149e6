#!/bin/bash
# Test hook: copies its stdin to stdout.
exec cat
