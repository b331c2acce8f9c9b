#!/bin/bash
# Whole runs side by side, for machines whose memory makes a run's time depend on what ran before
# it (a VM that hands freed memory back to its host: free page reporting, DAMON pageout). Per
# round, llama-quantize runs twice and then gquant twice, each output removed at once, and only the
# second run of each counts: every measured run follows a run of the same tool. Prints a TSV with
# the medians over the rounds: type, both process wall times (s) and their ratio, both wall times
# until the output is on disk (the process, then sync; gquant writes durably, while
# llama-quantize's output is still in the page cache when it exits) and their ratio, whether
# the outputs were identical in every round, and the floor: a plain copy of gquant's output
# (`cat` of the file, in the page cache, into a new file in OUTDIR, then sync; twice after the
# measured runs of each round, the second counts), which any tool that writes those bytes pays, and gquant's time until on disk over
# it. For the types that only move bytes it says how far from the copy a run still is.
#
#   docs/reference-speed/wholeruns-warm.sh LLAMA_QUANTIZE GQUANT MODEL IMATRIX THREADS OUTDIR ROUNDS TYPE... > runs.tsv
#
# IMATRIX - runs both without one. OUTDIR: where the outputs go (a folder on the disk, or /dev/shm
# to leave the disk out).
set -u
LQ=$1; GQ=$2; M=$3; IM=$4; TH=$5; D=$6; N=$7; shift 7
IMF=(--imatrix "$IM"); [ "$IM" = - ] && IMF=()
now() { date +%s.%N; }
# one TOOL OUT TYPE: prints the process's wall time and the time until a sync after it returned.
one() {
  local s e f
  sync; s=$(now)
  if [ "$1" = r ]; then "$LQ" "${IMF[@]}" "$M" "$2" "$3" "$TH"; else "$GQ" quantize "${IMF[@]}" "$M" "$2" "$3" "$TH"; fi >/dev/null 2>&1
  e=$(now); sync; f=$(now)
  awk -v s="$s" -v e="$e" -v f="$f" 'BEGIN { printf "%.3f %.3f\n", e - s, f - s }'
}
# copy FROM TO: the time of cat FROM > TO and a sync after it.
copy() {
  local s f
  sync; s=$(now)
  cat "$1" > "$2"; sync; f=$(now)
  awk -v s="$s" -v f="$f" 'BEGIN { printf "%.3f\n", f - s }'
}
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo -e "# type\treference_s\tgquant_s\tratio\treference_on_disk_s\tgquant_on_disk_s\ton_disk_ratio\tidentical\tcopy_on_disk_s\tgquant_over_copy"
for t in "$@"; do
  r=(); g=(); rd=(); gd=(); c=(); same=yes
  for _ in $(seq "$N"); do
    one r "$D/r.gguf" "$t" >/dev/null; rm -f "$D/r.gguf"
    read -r a b < <(one r "$D/r.gguf" "$t"); r+=("$a"); rd+=("$b")
    one g "$D/g.gguf" "$t" >/dev/null
    cmp -s "$D/r.gguf" "$D/g.gguf" || same=no
    rm -f "$D/r.gguf" "$D/g.gguf"
    read -r a b < <(one g "$D/g.gguf" "$t"); g+=("$a"); gd+=("$b")
    # The floor, after the measured runs: two copies of gquant's output, the second counts.
    copy "$D/g.gguf" "$D/c.gguf" >/dev/null; rm -f "$D/c.gguf"
    c+=("$(copy "$D/g.gguf" "$D/c.gguf")"); rm -f "$D/c.gguf" "$D/g.gguf"
  done
  mr=$(echo "${r[*]}" | median); mg=$(echo "${g[*]}" | median)
  mrd=$(echo "${rd[*]}" | median); mgd=$(echo "${gd[*]}" | median); mc=$(echo "${c[*]}" | median)
  awk -v t="$t" -v a="$mr" -v b="$mg" -v c="$mrd" -v d="$mgd" -v s="$same" -v k="$mc" \
    'BEGIN { printf "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%.2f\t%.2f\n", t, a, b, a / b, c, d, c / d, s, k, d / k }'
done
