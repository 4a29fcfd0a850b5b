#!/bin/sh
# Runs two instrumented programs several times: $1 three times, $2 twice.
# Under `lazyprobe run -c calls -- sh run_several.sh FIB MANY` every run is a
# process image of its own and all their counts must add up.
set -e
"$1"
"$1"
"$1"
"$2"
"$2"
echo "script done"
