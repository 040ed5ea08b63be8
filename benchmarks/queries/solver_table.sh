#!/bin/sh
# The measurements behind docs/solver.md: every encoding and session per backend, then the
# backends and portfolios against each other, on our corpus and the external one.
#   sh benchmarks/queries/solver_table.sh OUTDIR
# Each configuration gets at most BUDGET seconds per corpus (the seed stopped slow
# configurations too); tables compare the queries every configuration of a group replayed.
set -e
out=${1:?give an output directory}
limit=${LIMIT:-1000}
budget=${BUDGET:-15}
mkdir -p "$out"
here=$(dirname "$0")
corpora="$here/regexp.smt2.tar.xz $here/maze.smt2.tar.xz $here/expr_parser.smt2.tar.xz
 $here/rle_adler.smt2.tar.xz $here/histogram.smt2.tar.xz
 ../shared/corpora/queries/klee-querylogs ../shared/corpora/queries/exe-bench_ab
 ../shared/corpora/kquery/pcresymperf-3.kquery"
for b in z3 bitwuzla cvc5; do
  plots=""
  [ "$b" = z3 ] && plots="--plots $out/plots"
  python "$here/replay.py" $corpora --limit "$limit" --budget "$budget" --cutoff 10 \
    --config "$b:array-assert:none" --config "$b:nested-write:none" --config "$b:ite:none" \
    --config "$b:array-assert:assumptions" --config "$b:array-assert:pushpop" \
    --config "portfolio($b:array-assert:none, $b:array-assert:assumptions)" \
    --csv "$out/$b.csv" $plots > "$out/$b.txt" 2> "$out/$b.log" || true
done
python "$here/replay.py" $corpora --limit "$limit" --budget "$budget" --cutoff 10 \
  --config z3 --config bitwuzla --config cvc5 --config bitwuzla:array-assert:none \
  --config "portfolio(z3, bitwuzla)" --config "portfolio(z3, bitwuzla, stagger=0)" \
  --csv "$out/backends.csv" > "$out/backends.txt" 2> "$out/backends.log" || true
