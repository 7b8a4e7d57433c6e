#!/usr/bin/env bash
# Runs the e2e smokes, PARALLEL at a time: each brings up its own local
# cluster, whose components mostly wait on kwok's pod timings, so several
# share the machine without slowing each other (measured on the 2-core
# machine: four at once kept it busy while their clusters started, 20-40 %
# after, and each smoke took as long as with three at once). Every smoke's
# output is shown once it ends, with how long it took; the script fails if
# any smoke failed.
#
# usage: hack/smoke.sh PARALLEL 'NAME|ENV=VALUE …|COMMAND' …
# where COMMAND is go test's arguments, or a whole command line that starts
# with "go " (the bench smoke's go run).
set -uo pipefail
parallel=$1
shift
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

run() {
	local i=$1 spec=$2
	local name=${spec%%|*} rest=${spec#*|}
	local env=${rest%%|*} args=${rest#*|}
	case $args in
	go\ *) ;;
	*) args="go test -count=1 $args" ;;
	esac
	echo ">> $name"
	local began=$SECONDS
	# shellcheck disable=SC2086
	env $env $args >"$logs/$i.log" 2>&1
	echo $? >"$logs/$i.rc"
	echo $((SECONDS - began)) >"$logs/$i.took"
}

i=0
for spec in "$@"; do
	while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do
		wait -n
	done
	run "$i" "$spec" &
	i=$((i + 1))
done
wait

failed=0
i=0
for spec in "$@"; do
	rc=$(cat "$logs/$i.rc" 2>/dev/null || echo 1)
	echo "== ${spec%%|*}: $([ "$rc" = 0 ] && echo ok || echo FAILED) ($(cat "$logs/$i.took" 2>/dev/null || echo ?) s)"
	if [ "$rc" = 0 ]; then
		tail -n 3 "$logs/$i.log"
	else
		cat "$logs/$i.log"
		failed=1
	fi
	i=$((i + 1))
done
exit $failed
