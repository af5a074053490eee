#!/usr/bin/env bash
# Bar charts of the bench results: one pair of bars per row, redis-server beside vessel, with
# vessel's ratio under each label, drawn by gnuplot as SVG.
#
# Run, it draws one data file (the bench scripts call it; run it by hand to redraw a chart):
#   bench/chart.sh docs/img/cpu-strings-p16.dat     # writes docs/img/cpu-strings-p16.svg
# Sourced by a bench script (from the repository's root), it gives the script:
#   chart_begin NAME TITLE YLABEL METHOD [SERIES]   starts CHART_DIR/NAME.dat
#   chart_row NAME LABEL REDIS VESSEL               adds a bar pair
#   chart_draw NAME                                 puts the data file in place and draws it
# CHART_DIR is docs/img by default (where the documentation shows the charts); CHARTS=0 turns
# charts off. A run that stops early leaves the previous data file and chart as they were.
#
# A data file is tab-separated: comment lines first, then one row per bar pair,
# "label<TAB>redis value<TAB>vessel value". The comments give the chart its text:
#   # title: CPU time per operation, strings, -P 16
#   # ylabel: server CPU µs per operation
#   # measured: 2026-11-25, commit 1234abc, 2 cores
#   # method: bench/compare.sh: both servers on one core, three interleaved rounds, medians
# and, optionally, "# series: <first>|<second>" (the legend; redis-server 7.0.15|vessel by
# default) and "# ratio: no" (no ratio under the labels).

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  CHART_DIR=${CHART_DIR:-docs/img}
  CHARTS=${CHARTS:-1}
  chart_begin() {
    [ "$CHARTS" = 1 ] || return 0
    mkdir -p "$CHART_DIR"
    {
      printf '# title: %s\n# ylabel: %s\n' "$2" "$3"
      printf '# measured: %s, commit %s, %s cores\n' "$(date +%F)" \
        "$(git describe --always --dirty 2>/dev/null || echo unknown)" "$(nproc)"
      printf '# method: %s\n' "$4"
      [ -z "${5:-}" ] || printf '# series: %s\n' "$5"
    } >"$CHART_DIR/$1.dat.new"
  }
  chart_row() {
    [ "$CHARTS" = 1 ] || return 0
    printf '%s\t%s\t%s\n' "$2" "$3" "$4" >>"$CHART_DIR/$1.dat.new"
  }
  chart_draw() {
    [ "$CHARTS" = 1 ] || return 0
    mv "$CHART_DIR/$1.dat.new" "$CHART_DIR/$1.dat"
    bench/chart.sh "$CHART_DIR/$1.dat"
  }
  return 0
fi

set -euo pipefail

[ $# -ge 1 ] || { echo "usage: bench/chart.sh FILE.dat [FILE.svg]" >&2; exit 2; }
dat=$1
svg=${2:-${dat%.dat}.svg}
[ -f "$dat" ] || { echo "chart: no such data file: $dat" >&2; exit 1; }
if ! command -v gnuplot >/dev/null; then
  echo "chart: gnuplot not found (scripts/deps.sh bench installs it); data kept in $dat" >&2
  exit 0
fi

field() { sed -n "s/^# $1: *//p" "$dat" | head -1; }
title=$(field title)
ylabel=$(field ylabel)
measured=$(field measured)
method=$(field method)
series=$(field series)
[ -n "$series" ] || series="redis-server 7.0.15|vessel"
ratio=$(field ratio)
rows=$(grep -cv '^#' "$dat" || true)
[ "$rows" -gt 0 ] || { echo "chart: no rows in $dat" >&2; exit 1; }
width=$((160 + 78 * rows))
[ "$width" -ge 640 ] || width=640

# Strings reach gnuplot as single-quoted literals (any quote inside doubled); dq makes a
# double-quoted one, where line breaks become \n.
q() { printf "'%s'" "${1//\'/\'\'}"; }
dq() {
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "${s//$'\n'/\\n}"
}
if [ "$ratio" = no ]; then
  xtic='xtic(1)'
  note="measured $measured"
else
  xtic='xtic(sprintf("%s\n%.2f×", strcol(1), column(2) > 0 ? column(3) / column(2) : 0))'
  note="measured $measured; under each label: ${series#*|} / ${series%%|*}"
fi
# The footnote, folded to the chart's width: when, then how.
footnote=$( { echo "$note"; echo "$method"; } | fold -s -w $((width / 6)) | sed 's/ *$//')
lines=$(printf '%s\n' "$footnote" | wc -l)
height=$((400 + 14 * lines))

gnuplot <<EOF
set terminal svg size $width,$height noenhanced font 'sans,11' background rgb 'white'
set output $(q "$svg")
set datafile separator '\t'
set title $(q "$title")
set label 1 $(dq "$footnote") at character 1, character $lines left front font 'sans,9'
set bmargin $((lines + 4))
set xrange [-0.6:$rows - 0.4]
set ylabel $(q "$ylabel")
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set grid ytics lc rgb '#dddddd'
set border 3
set xtics nomirror scale 0 font 'sans,10'
set ytics nomirror
set key top left reverse Left noautotitle
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.95
first = $(q "${series%%|*}")
second = $(q "${series#*|}")
plot $(q "$dat") using 2:$xtic title first lc rgb '#c0392b', \
     '' using 3 title second lc rgb '#2471a3', \
     '' using (\$0 - 1.0/6):2:(strcol(2)) with labels offset 0,0.7 font 'sans,8' notitle, \
     '' using (\$0 + 1.0/6):3:(strcol(3)) with labels offset 0,0.7 font 'sans,8' notitle
EOF
echo "chart: $svg"
