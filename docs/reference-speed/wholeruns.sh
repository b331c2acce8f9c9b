#!/bin/bash
# Whole runs side by side: the reference's llama-quantize and gquant on the same model, imatrix
# and thread count, one file type after the other on the same machine, each output compared byte
# for byte and then removed. Prints a TSV: type, both "quantize time" figures from the logs (s),
# their ratio, whether the outputs are identical, both peak RSS (KiB, GNU time), and both wall
# times from start to the output on disk (s: the process, then sync; gquant writes durably, while
# llama-quantize's time stops with its output in the page cache) and their ratio.
#
#   docs/reference-speed/wholeruns.sh LLAMA_QUANTIZE GQUANT MODEL IMATRIX THREADS TYPE... > runs.tsv
#
# IMATRIX - runs both without one.
set -u
LQ=$1; GQ=$2; M=$3; IM=$4; T=$5; shift 5
IMF=(--imatrix "$IM"); [ "$IM" = - ] && IMF=()
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
echo -e "# type\treference_s\tgquant_s\tratio\tidentical\treference_rss_kib\tgquant_rss_kib\treference_on_disk_s\tgquant_on_disk_s\ton_disk_ratio"
now() { date +%s.%N; }
for t in "$@"; do
  sync; r0=$(now)
  /usr/bin/time -f %M -o "$W/r.rss" "$LQ" "${IMF[@]}" "$M" "$W/r.gguf" "$t" "$T" > "$W/r.log" 2>&1; rc=$?
  sync; r1=$(now)
  /usr/bin/time -f %M -o "$W/g.rss" "$GQ" quantize "${IMF[@]}" "$M" "$W/g.gguf" "$t" "$T" > "$W/g.log" 2>&1; gc=$?
  sync; g1=$(now)
  disk=$(awk -v a="$r0" -v b="$r1" -v c="$g1" 'BEGIN { printf "%.3f\t%.3f\t%.2f", b - a, c - b, (b - a) / (c - b) }')
  rs=$(awk '/quantize time/ {print $5/1000}' "$W/r.log"); gs=$(awk '/quantize time/ {print $5/1000}' "$W/g.log")
  same=no; cmp -s "$W/r.gguf" "$W/g.gguf" && same=yes
  [ $rc = 0 ] || same="reference exit $rc"; [ $gc = 0 ] || same="$same, gquant exit $gc"
  ratio=$(awk -v a="${rs:-0}" -v b="${gs:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }')
  echo -e "$t\t$rs\t$gs\t$ratio\t$same\t$(tail -1 "$W/r.rss")\t$(tail -1 "$W/g.rss")\t$disk"
  rm -f "$W/r.gguf" "$W/g.gguf"
done
