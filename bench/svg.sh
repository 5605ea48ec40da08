#!/bin/bash
# svg: the SVG flame graph of a recording with about 100,000 distinct stacks: its size
# (target under 5 MB) and the time headless Chromium takes to load and draw it
# (target under 2 s); and `perfconv info` on that recording (about 650 MB) against a
# conversion to folded (target: a fraction of it). Records once into bench/work/ (bench/manystacks.c, 8 s at one
# sample per 20 us); run from the tree's top after `make`: bench/svg.sh
set -eu
cd "$(dirname "$0")/.."
W=bench/work
mkdir -p $W
if [ ! -f $W/manystacks.data ]; then
	cc -O1 -fno-omit-frame-pointer -fno-inline -o $W/manystacks bench/manystacks.c
	perf record -q -e cpu-clock -c 20000 -g -o $W/manystacks.data $W/manystacks 2200000 >/dev/null
fi
./perfconv -q -i $W/manystacks.data -o $W/manystacks.folded
stacks=$(wc -l <$W/manystacks.folded)
start=$(date +%s.%N)
./perfconv -q -i $W/manystacks.data -o $W/manystacks.svg
end=$(date +%s.%N)
size=$(stat -c %s $W/manystacks.svg)
echo "svg: $stacks distinct stacks; $(grep -c '^<g>' $W/manystacks.svg) frames drawn," \
	"$(sed -n 's/.*left-out-frames=\([0-9]*\).*/\1/p' $W/manystacks.svg) left out;" \
	"$size bytes written in $(echo "$end - $start" | bc) s"
[ -d tests/browser/node_modules/playwright-core ] || (cd tests/browser && npm ci --no-audit --no-fund >/dev/null)
node bench/svg_draw.mjs $W/manystacks.svg
t() { local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
info_ms=$(t ./perfconv info -i $W/manystacks.data)
folded_ms=$(t ./perfconv -q -i $W/manystacks.data -o /dev/null)
echo "svg: perfconv info took $info_ms ms, a conversion to folded $folded_ms ms ($(stat -c %s $W/manystacks.data) bytes)"
[ "$size" -lt $((5 * 1024 * 1024)) ] && echo "svg: size: met (under 5 MB)" || { echo "svg: size: MISSED"; exit 1; }
