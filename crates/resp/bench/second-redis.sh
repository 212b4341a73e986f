#!/usr/bin/env bash
# A second redis-server standing in for `sluice serve --resp 127.0.0.1:PORT ...`, so that
# variants.sh can pair Redis against itself and show the benchmark's own noise floor:
#   VARIANTS="bin=crates/resp/bench/second-redis.sh --resp-busy-poll-us=50" crates/resp/bench/variants.sh
set -euo pipefail
addr=${3:?"usage: second-redis.sh serve --resp 127.0.0.1:PORT"}
exec redis-server --port "${addr##*:}" --bind 127.0.0.1 --save '' --appendonly no --loglevel warning
