#!/bin/bash
# Test hook: appends "<action> <device> <fault id> <dry run>" to the file $1, then exits $2.
echo "$FAULTD_ACTION $FAULTD_DEVICE $FAULTD_FAULT_ID $FAULTD_DRY_RUN" >> "$1"
exit "${2:-0}"
