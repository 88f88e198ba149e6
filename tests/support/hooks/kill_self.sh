#!/bin/bash
# Test hook: dies of a signal nobody sent from outside.
kill -USR1 $$
sleep 5
