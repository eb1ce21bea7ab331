# ruff: noqa: E501  (the page is CSS/JS/HTML text, not Python)
"""The page around the fleet report's data (report/html.py): inline CSS and JS, nothing fetched.

The script reads the JSON of <script id="data">, builds the grid with DOM calls (text through
textContent only, never innerHTML), filters rows, and shows one host's details for #host=NAME.
"""

PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>
body{font:13px/1.35 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{padding:10px 16px;background:#1d232a;color:#fff}
header h1{font-size:17px;margin:0}
header p{margin:2px 0 0;color:#b8c0c8;font-size:12px}
#summary{display:flex;gap:8px;flex-wrap:wrap;padding:10px 16px}
.pill{padding:4px 10px;border-radius:12px;font-weight:600;background:#e4e7eb}
.bar{display:flex;gap:10px;align-items:center;padding:0 16px 8px}
.bar input{width:280px;padding:4px 6px}
#count{color:#5b6670}
main{display:flex;gap:12px;padding:0 16px 16px;align-items:flex-start}
#gridbox{overflow:auto;max-height:calc(100vh - 150px);background:#fff;border:1px solid #d5d9de;flex:1 1 auto}
table.grid{border-collapse:collapse}
.grid th{position:sticky;top:0;background:#fff;z-index:1;font-weight:500;vertical-align:bottom;padding:2px}
.grid th.col{height:150px;width:18px;white-space:nowrap;font-size:11px}
.grid th.col span{writing-mode:vertical-rl;transform:rotate(180deg);display:inline-block;max-height:148px;overflow:hidden;text-overflow:ellipsis}
.grid th.drift{background:#eef2ff}
.grid td{border:1px solid #fff;padding:0;height:16px}
.grid td.cell{width:18px;min-width:18px}
.grid td.name{padding:0 8px 0 10px;white-space:nowrap;max-width:260px;overflow:hidden;text-overflow:ellipsis;position:sticky;left:0;background:#fff}
.grid td.dv{padding:0 6px;white-space:nowrap;max-width:160px;overflow:hidden;text-overflow:ellipsis;font-size:11px}
.grid tr.host{cursor:pointer}
.grid tr.host:hover td.name,.grid tr.sel td.name{background:#dde7ff}
.sev-c{box-shadow:inset 6px 0 #d93025}.sev-w{box-shadow:inset 6px 0 #f4b400}.sev-u{box-shadow:inset 6px 0 #a142f4}.sev-o,.sev-s{box-shadow:inset 6px 0 #34a853}
.c{background:#d93025;color:#fff}.w{background:#f4b400}.u{background:#a142f4;color:#fff}
.o{background:#34a853}.s{background:#c9ced4}.n{background:#f1f3f4}
.dv.w{background:#fde8a8}.dv.o{background:#e6f4ea}
#details{flex:0 0 38%;max-height:calc(100vh - 150px);overflow:auto;background:#fff;border:1px solid #d5d9de;padding:10px 14px}
#details h2{font-size:16px;margin:0 0 6px;word-break:break-all}
#details table{border-collapse:collapse;width:100%;margin-bottom:10px}
#details td,#details th{border-bottom:1px solid #eceff1;padding:3px 4px;text-align:left;vertical-align:top;word-break:break-word}
#details td.sev{width:64px;font-weight:600}
.muted{color:#6b7680}
.legend span{display:inline-block;padding:0 6px;margin-right:4px;border-radius:3px}
</style>
</head>
<body>
<header><h1>@TITLE@</h1><p>@SUBTITLE@</p></header>
<div id="summary"></div>
<div class="bar">
 <label>severity <select id="sev">
  <option value="">all hosts</option><option value="problems" selected>hosts with problems</option>
  <option value="c">critical</option><option value="w">warning</option>
  <option value="u">unknown</option><option value="o">ok</option></select></label>
 <label>filter <input id="q" type="search" placeholder="host, check id or text"></label>
 <span id="count"></span>
 <span class="legend"><span class="c">critical</span><span class="w">warning</span><span class="u">unknown</span><span class="o">ok</span><span class="s">n/a</span></span>
</div>
<main><div id="gridbox"><table class="grid" id="grid"></table></div>
<section id="details"><p class="muted">Click a host (or open #host=NAME) for its findings, fixes and versions.</p></section></main>
<noscript><p>This report needs JavaScript to draw the grid; the same data is in --format json.</p></noscript>
<script id="data" type="application/json">@DATA@</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const S = D.strings, NAMES = {c:"critical", w:"warning", u:"unknown", o:"ok", s:"n/a", "-":""};
const RANK = {c:3, w:2, u:1, o:0, s:0, "-":0};
function el(tag, cls, text){const e=document.createElement(tag); if(cls) e.className=cls;
  if(text!==undefined&&text!==null) e.textContent=String(text); return e;}
function hay(h){ if(h._hay===undefined){ const parts=[h.n]; for(const f of h.f){parts.push(S[f[1]],S[f[2]],S[f[3]]);}
  for(const d of h.d){parts.push(d[0]);} if(h.x) parts.push(h.x); h._hay=parts.join("\n").toLowerCase(); } return h._hay;}
function summary(){ const box=document.getElementById("summary"); const n={c:0,w:0,u:0,o:0};
  for(const h of D.hosts){ n[h.s==="s"?"o":h.s]++; }
  box.appendChild(el("span","pill",D.hosts.length+(D.hosts.length===1?" host":" hosts")));
  for(const k of ["c","w","u","o"]) box.appendChild(el("span","pill "+k, NAMES[k]+" "+n[k]));
  box.appendChild(el("span","pill", D.columns.length+" checks, "+D.drift.length+" drift fields"));}
function grid(){ const t=document.getElementById("grid"); const head=el("tr");
  head.appendChild(el("th","", "host"));
  for(const c of D.columns){ const th=el("th","col"); th.title=c; th.appendChild(el("span","",c)); head.appendChild(th);}
  for(const d of D.drift){ const th=el("th","col drift"); th.title="drift: "+d[1]; th.appendChild(el("span","","drift: "+d[0])); head.appendChild(th);}
  const thead=el("thead"); thead.appendChild(head); t.appendChild(thead);
  const body=el("tbody"); t.appendChild(body);
  D.hosts.forEach((h,i)=>{ const tr=el("tr","host"); tr.dataset.i=i; tr.dataset.host=h.n;
    const name=el("td","name sev-"+h.s, h.n); name.title=h.n+": "+NAMES[h.s]; tr.appendChild(name);
    for(let j=0;j<h.g.length;j++){ const code=h.g[j]; const td=el("td","cell "+(code==="-"?"n":code));
      td.title=D.columns[j]+": "+(NAMES[code]||"not run"); tr.appendChild(td);}
    for(let j=0;j<h.d.length;j++){ const v=h.d[j]; const td=el("td","dv "+(v[1]==="-"?"n":v[1]), v[0]);
      td.title=D.drift[j][1]+": "+v[0]; tr.appendChild(td);}
    tr.addEventListener("click",()=>{ location.hash="host="+encodeURIComponent(h.n); });
    h._tr=tr; body.appendChild(tr); });}
function filter(){ const sev=document.getElementById("sev").value; const q=document.getElementById("q").value.trim().toLowerCase();
  let shown=0; for(const h of D.hosts){ let ok=true;
    if(sev==="problems") ok=RANK[h.s]>=1; else if(sev) ok=(h.s===sev)||(sev==="o"&&h.s==="s");
    if(ok&&q) ok=hay(h).includes(q);
    h._tr.style.display=ok?"":"none"; if(ok) shown++; }
  document.getElementById("count").textContent=shown+" of "+D.hosts.length+" hosts shown";}
function kv(table,k,v){ if(v===undefined||v===null||v==="") return; const tr=el("tr"); tr.appendChild(el("th","",k));
  tr.appendChild(el("td","",Array.isArray(v)?v.join(", "):(typeof v==="object"?Object.entries(v).map(e=>e[0]+" "+e[1]).join(", "):v))); table.appendChild(tr);}
function details(){ const m=/^#host=(.*)$/.exec(location.hash); const box=document.getElementById("details");
  if(!m) return; let name; try{ name=decodeURIComponent(m[1]); }catch(e){ return; }
  const h=D.hosts.find(x=>x.n===name); if(!h) return;
  for(const x of D.hosts) x._tr.classList.toggle("sel", x===h);
  h._tr.style.display=""; box.replaceChildren();
  const title=el("h2","",h.n); box.appendChild(title); box.dataset.host=h.n;
  box.appendChild(el("p","pill "+h.s, NAMES[h.s]+(h.x?" - not audited: "+h.x:"")));
  box.appendChild(el("h3","", h.f.length?"Findings":"No problems ("+h.p+" checks passed)"));
  if(h.f.length){ const t=el("table","findings"); t.id="findings";
    for(const f of h.f){ const tr=el("tr"); tr.appendChild(el("td","sev "+f[0],NAMES[f[0]]));
      const td=el("td"); td.appendChild(el("b","",S[f[1]])); if(S[f[2]]) td.appendChild(el("span","muted"," "+S[f[2]]));
      td.appendChild(el("div","",S[f[3]]));
      if(S[f[4]]||S[f[5]]) td.appendChild(el("div","muted","actual: "+S[f[4]]+"  expected: "+S[f[5]]));
      if(S[f[6]]) td.appendChild(el("div","fix","fix: "+S[f[6]]));
      const ref=S[f[7]]; if(ref&&/^https:\/\//.test(ref)){ const a=el("a","",ref); a.href=ref; a.rel="noopener noreferrer"; td.appendChild(a); }
      tr.appendChild(td); t.appendChild(tr);} box.appendChild(t);
    box.appendChild(el("p","muted",h.p+" other checks passed"));}
  const inv=h.i||{}; box.appendChild(el("h3","","Versions"));
  const ht=el("table","inv"); for(const [k,v] of Object.entries(inv.host||{})) kv(ht,k,v); box.appendChild(ht);
  (inv.gpus||[]).forEach(g=>{ box.appendChild(el("h3","","GPU "+g.gpu+(g.bdf?" ("+g.bdf+")":"")));
    const gt=el("table","gpu"); for(const [k,v] of Object.entries(g)) if(k!=="gpu"&&k!=="bdf") kv(gt,k,v); box.appendChild(gt); });
  h._tr.scrollIntoView({block:"nearest"});}
summary(); grid(); filter(); details();
document.getElementById("sev").addEventListener("change",filter);
document.getElementById("q").addEventListener("input",filter);
window.addEventListener("hashchange",details);
document.body.dataset.ready="1";
</script>
</body>
</html>
"""
