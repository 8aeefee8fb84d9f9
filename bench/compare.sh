#!/usr/bin/env bash
# Runs fieldmc and the Python peers (../shared/peers, or $PEERS) on the same settings in one go
# and prints the speed ratios: one chain, one thread, pCN, gaussian, l = 0.3, f = 4, beta = 0.2.
# Times compared: the peer's setup + chain seconds against fieldmc's job setup + chain seconds.
#
#   bench/compare.sh                 # D = 32 64 128 256, T = 10^4
#   SIZES="64" T=10000 bench/compare.sh
#   SAMPLER=grw SIZES="64" bench/compare.sh   # the same for GRW-MH
#
# The peers need numpy and scipy: the script makes a virtual environment in bench/.venv (nothing
# is installed globally). numpy_seed_style is slow (about 300 s at D = 64), so it runs
# SEED_STYLE_T iterations (default 2000) and its chain time is scaled to T, as the peers' README
# does; its setup is not scaled. Peers that cannot run a size (dense N x N factor) are skipped.
# Writes bench/results/compare_$SAMPLER.csv (with date, commit, machine and the load average before
# each size) and its Markdown table bench/results/compare_$SAMPLER.md, which README.md includes
# (tests/generated_docs.rs holds the two equal).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
. "$here/common.sh"
PEERS="${PEERS:-$root/../shared/peers}"
SIZES="${SIZES:-32 64 128 256}"
T="${T:-10000}"
SEED_STYLE_T="${SEED_STYLE_T:-2000}"
BATCHED_MAX_D="${BATCHED_MAX_D:-128}"
SEED_STYLE_MAX_D="${SEED_STYLE_MAX_D:-64}"
SAMPLER="${SAMPLER:-pcn}"
common=(--T "$T" --beta 0.2 --l 0.3 --f 4 --likelihood gaussian --sampler "$SAMPLER" --seed 0)
export OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 OMP_NUM_THREADS=1

if [ ! -x "$here/.venv/bin/python" ]; then
  python3 -m venv "$here/.venv"
  "$here/.venv/bin/pip" install --quiet numpy scipy
fi
py="$here/.venv/bin/python"
(cd "$root" && cargo build --release --quiet --bin fieldmc)
fieldmc="${CARGO_TARGET_DIR:-$root/target}/release/fieldmc"

# seconds = setup + chain (chain scaled from $2 iterations to $T where they differ)
seconds() { "$py" -c "import json,sys; r=json.loads(sys.argv[1]); print(f\"{r['setup_seconds'] + r['sample_seconds'] * $T / $2:.3f}\")" "$1"; }
field() { "$py" -c "import json,sys; print(json.loads(sys.argv[1]).get('$2'))" "$1"; }

out="${OUT:-$root/bench/results/compare_$SAMPLER.csv}"
mkdir -p "$(dirname "$out")"
{
  echo "# bench/compare.sh: $SAMPLER, gaussian, T = $T, one chain, one thread; seconds = setup + chain"
  (cd "$root" && provenance)
  echo "D,N,fieldmc_s,numpy_batched_s,rows_only_s,seed_style_s,x_best_numpy,x_seed_style,acceptance,load_before"
} > "$out"
for D in $SIZES; do
  load=$(cut -d' ' -f1 /proc/loadavg)
  ours=$("$fieldmc" bench --D "$D" "${common[@]}")
  t_ours=$(seconds "$ours" "$T")
  t_batched= ; t_rows= ; t_seed= ; best=
  if [ "$D" -le "$BATCHED_MAX_D" ]; then
    b=$("$py" "$PEERS/numpy_batched.py" --D "$D" "${common[@]}"); t_batched=$(seconds "$b" "$T")
    r=$("$py" "$PEERS/numpy_batched.py" --D "$D" "${common[@]}" --rows-only); t_rows=$(seconds "$r" "$T")
    best=$("$py" -c "print(min($t_batched, $t_rows))")
  fi
  if [ "$D" -le "$SEED_STYLE_MAX_D" ]; then
    s=$("$py" "$PEERS/numpy_seed_style.py" --D "$D" --T "$SEED_STYLE_T" --beta 0.2 --l 0.3 --f 4 \
        --likelihood gaussian --sampler "$SAMPLER" --seed 0)
    t_seed=$(seconds "$s" "$SEED_STYLE_T")
  fi
  ratio() { [ -z "$1" ] && echo "" || "$py" -c "print(f'{$1 / $t_ours:.1f}')"; }
  echo "$D,$((D * D)),$t_ours,$t_batched,$t_rows,$t_seed,$(ratio "$best"),$(ratio "$t_seed"),$(field "$ours" acceptance_rate),$load" | tee -a "$out"
done
python3 "$here/compare_table.py" "$out" > "${out%.csv}.md"
echo "wrote $out and ${out%.csv}.md"
