package report

// pageCSS is the page's style sheet: constant, written by us, so it goes
// into <style> as it is (see raw). It must never hold "</style".
const pageCSS = `
:root { --ok: #007a5a; --no: #c2410c; --err: #6d28d9; --oth: #6b7280; --ink: #1f2328; --mute: #59636e; --line: #d0d7de; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: var(--bg); }
main { max-width: 1240px; margin: 0 auto; padding: 20px 24px 40px; }
h1 { font-size: 22px; margin: 0 0 2px; }
h2 { font-size: 19px; margin: 0 0 12px; word-break: break-all; }
h3 { font-size: 15px; margin: 22px 0 6px; }
p.meta, p.note, .mute { color: var(--mute); }
p.note { margin: 4px 0 0; font-size: 13px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
section.run, section.overview { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 18px 20px; margin: 16px 0; }
.banner { border-radius: 8px; padding: 10px 16px; font-weight: 600; font-size: 16px; margin: 12px 0; border: 1px solid; }
.o-pass { background: #e6f4ea; border-color: #1a7f37; color: #116329; }
.o-fail { background: #fdecea; border-color: #cf222e; color: #a40e26; }
.o-untested { background: #fff8e1; border-color: #9a6700; color: #7d4e00; }
.cards { display: flex; gap: 14px; flex-wrap: wrap; align-items: stretch; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; background: #fff; }
.card.verdict { flex: 3 1 420px; }
.card.gradecard { flex: 0 0 230px; text-align: center; }
.card.counts { flex: 1 1 230px; }
.verdict .big { font-size: 17px; font-weight: 600; margin: 0 0 8px; word-break: break-word; }
.letter { font-size: 56px; font-weight: 800; line-height: 1; margin: 4px 0; }
.g-a .letter, .gl.g-a { color: #116329; } .g-b .letter, .gl.g-b { color: #0b5394; } .g-c .letter, .gl.g-c { color: #9a6700; }
.g-f .letter, .gl.g-f { color: #a40e26; } .g-na .letter, .gl.g-na { color: var(--oth); }
.gradecard ul { text-align: left; padding-left: 18px; margin: 6px 0 0; font-size: 12.5px; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }
dl.kv dt { color: var(--mute); } dl.kv dd { margin: 0; font-variant-numeric: tabular-nums; word-break: break-word; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg); font-weight: 600; }
td.k { color: var(--mute); white-space: nowrap; }
.c-pass .sym { color: #116329; } .c-fail .sym { color: #a40e26; } .c-warn .sym { color: #9a6700; } .c-skip .sym, .c-untested .sym { color: var(--oth); }
.sym { font-weight: 700; white-space: nowrap; }
tr.c-fail td { background: #fff5f5; } tr.c-warn td { background: #fffbea; } tr.c-untested td { background: #fffbea; }
.legend { display: flex; gap: 18px; flex-wrap: wrap; font-size: 12.5px; color: var(--mute); margin: 2px 0 4px; }
.legend svg { vertical-align: middle; margin-right: 4px; }
svg.chart { width: 100%; height: auto; display: block; background: #fff; }
svg .grid { stroke: #eaeef2; stroke-width: 1; }
svg .axis { stroke: #8c959f; stroke-width: 1; }
svg .tick { font-size: 11px; fill: var(--mute); }
svg .axis-label, svg .phase { font-size: 11.5px; fill: var(--mute); }
svg .band0 { fill: #f6f8fa; } svg .band1 { fill: #eef3f9; }
svg .p-admitted { fill: var(--ok); } svg .p-rejected { fill: var(--no); } svg .p-error { fill: var(--err); } svg .p-other { fill: var(--oth); }
svg .pt { stroke: #fff; stroke-width: 0.6; }
svg .pt:hover, svg .pt:target { stroke: #000; stroke-width: 2; }
svg .wait { stroke-width: 1.4; stroke-opacity: 0.75; }
svg .w-admitted { stroke: var(--ok); } svg .w-rejected { stroke: var(--no); } svg .w-error { stroke: var(--err); } svg .w-other { stroke: var(--oth); }
svg .b-admitted { fill: var(--ok); } svg .b-rejected { fill: var(--no); fill-opacity: 0.45; } svg .b-other { fill: var(--oth); fill-opacity: 0.6; }
svg .model { fill: none; stroke: #111827; stroke-width: 2; }
svg .capacity { stroke: #111827; stroke-width: 1.2; stroke-dasharray: 5 4; }
ul.evidence { margin: 4px 0; padding-left: 20px; }
a { color: #0b5394; }
footer { color: var(--mute); font-size: 12px; margin-top: 24px; }
@media print {
  body { background: #fff; font-size: 11px; }
  main { max-width: none; padding: 0; }
  section.run, section.overview { border: none; padding: 0; margin: 0 0 12px; }
  section.run { break-before: page; }
  section.run:first-of-type { break-before: auto; }
  .card, table, svg.chart, h3 { break-inside: avoid; }
  svg.chart { max-height: 90mm; }
  h3 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
}
@page { size: A4 landscape; margin: 12mm; }
`
