#!/bin/sh
# callgrind-ab.sh counts the instructions of one benchmark iteration at two
# commits, deterministically (to about 0.15%), where a wall-clock A/B on a
# shared machine cannot tell 2% from noise.
#
#	bench/callgrind-ab.sh OLD NEW PKG BENCH [N1 N2]
#	bench/callgrind-ab.sh f2569fe HEAD ./handler BenchmarkExportGRPC500x10
#
# Each commit's test binary of PKG runs BENCH under callgrind with
# -benchtime N1x and N2x (default 100 and 300); (Ir(N2) - Ir(N1)) / (N2 - N1)
# is one iteration, with the process's start, the payload's loading and the
# benchmark's b.N=1 round subtracted out. GOMAXPROCS=1 and no asynchronous
# preemption, or idle processors spinning under callgrind and its handling
# of Go's preemption signal make the totals vary by billions; and no
# adaptive stack start, or the size of a new goroutine's stack follows the
# average at the last collection, and unrelated edits move a request's
# instructions by 5 % (stack growth and copies). The profiles
# stay in the work directory printed at the end, for
# `callgrind_annotate --auto=no --threshold=100 FILE` per function (take
# the same difference of two runs per function).
set -eu
[ $# -ge 4 ] || { sed -n '2,16p' "$0"; exit 2; }
old=$1 new=$2 pkg=$3 bench=$4 n1=${5:-100} n2=${6:-300}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
for rev in "$old" "$new"; do
	t=$(echo "$rev" | tr / _)
	git -C "$root" worktree add --detach "$work/src-$t" "$rev" >/dev/null
	(cd "$work/src-$t" && go test -c -o "$work/$t.test" "$pkg")
done
for rev in "$old" "$new"; do
	t=$(echo "$rev" | tr / _)
	for n in "$n1" "$n2"; do
		(cd "$work/src-$t/$pkg" && GODEBUG=asyncpreemptoff=1,adaptivestackstart=0 GOMAXPROCS=1 \
			valgrind --tool=callgrind --callgrind-out-file="$work/$t.$n.out" \
			"$work/$t.test" -test.run '^$' -test.bench "^$bench\$" -test.benchtime "${n}x" \
			>"$work/$t.$n.log" 2>&1)
	done
	a=$(awk '/^summary:/ {print $2; exit}' "$work/$t.$n1.out")
	b=$(awk '/^summary:/ {print $2; exit}' "$work/$t.$n2.out")
	echo "$rev $bench: $(( (b - a) / (n2 - n1) )) instructions per iteration"
	git -C "$root" worktree remove --force "$work/src-$t"
done
echo "profiles in $work"
