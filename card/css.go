package card

// CSS is the style sheet for the classes [Card.HTML] uses. Serve it as a
// file, or inline it under a hash-based content security policy.
const CSS = `.asu-card{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:#17171a;background:#fff;border:1px solid #c9c9d1;border-radius:10px;max-width:46rem;margin:1rem auto;overflow:hidden;box-shadow:0 1px 3px rgba(0,0,0,.08)}
.asu-card h3{font-size:.78rem;letter-spacing:.06em;text-transform:uppercase;color:#55555f;margin:0 0 .5rem}
.asu-card h4{font-size:.85rem;margin:.6rem 0 .3rem;color:#44444c}
.asu-head{padding:1rem 1.25rem;border-bottom:1px solid #e2e2e8;background:#f6f6f8}
.asu-kicker{margin:0;font-size:.75rem;text-transform:uppercase;letter-spacing:.08em;color:#66666f}
.asu-title{margin:.15rem 0 .1rem;font-size:1.4rem}
.asu-tool{margin:0;color:#55555f;font-size:.9rem}
.asu-class{display:inline-block;margin:.6rem 0 0;padding:.25rem .6rem;border-radius:6px;font-weight:600;font-size:.9rem;background:#e8eef7;color:#1d3b66}
.asu-class-external .asu-head{background:#fff6e8;border-bottom-color:#f0c987}
.asu-class-external .asu-class{background:#9a4a00;color:#fff}
.asu-class-external .asu-class::before,.asu-class-irreversible .asu-class::before{content:"\26A0\FE0E  "}
.asu-class-irreversible .asu-head{background:#fdecec;border-bottom-color:#eba3a3}
.asu-class-irreversible .asu-class{background:#a3121b;color:#fff}
.asu-section{padding:.9rem 1.25rem;border-bottom:1px solid #ececf0}
.asu-section ul{margin:0;padding-left:1.2rem}
.asu-meta{margin:.4rem 0 0;color:#66666f;font-size:.85rem}
.asu-approvers{margin:.4rem 0 0;font-weight:600}
.asu-mono,.asu-val,.asu-host,.asu-key,.asu-argname,.asu-agent-text,.asu-argval b,.asu-argval i{font-family:ui-monospace,"DejaVu Sans Mono","Noto Sans Mono",Menlo,Consolas,monospace}
.asu-t,.asu-mono,.asu-val,.asu-argval b,.asu-argval i{white-space:pre-wrap;overflow-wrap:break-word;word-break:normal;hyphens:none;unicode-bidi:isolate}
.asu-str,.asu-str .asu-t,.asu-key,.asu-key .asu-t,.asu-mono .asu-t,.asu-argval b,.asu-argval b .asu-t{overflow-wrap:normal}
.asu-host,.asu-number,.asu-hash,.asu-argval i{white-space:nowrap}
.asu-argval b{font-weight:400}
.asu-argval i{font-style:normal}
.asu-role-recipient .asu-str,.asu-role-recipient .asu-str *,.asu-word,.asu-word *{white-space:pre}
.asu-refs li,.asu-unbound li,.asu-context dd{overflow-x:auto}
.asu-argtable{display:grid;grid-template-columns:minmax(7rem,11rem) minmax(0,1fr);gap:0 .9rem}
.asu-arg{display:contents}
.asu-arghead{font-weight:600;padding:.45rem 0;border-top:1px solid #f0f0f3}
.asu-argval{padding:.45rem 0;border-top:1px solid #f0f0f3;min-width:0;overflow-x:auto}
.asu-arg:first-child .asu-arghead,.asu-arg:first-child .asu-argval{border-top:0}
.asu-argname{display:block;font-weight:400;font-size:.8rem;color:#66666f}
.asu-label+.asu-argname{margin-top:.1rem}
.asu-val,.asu-argval i{font-size:1rem;background:#f3f3f6;border-radius:4px;padding:.05rem .3rem}
.asu-role-recipient .asu-val,.asu-role-amount .asu-val,.asu-role-recipient .asu-argval i,.asu-role-amount .asu-argval i{font-size:1.1rem;font-weight:700;background:#eef3fb}
.asu-unit{font-weight:400;color:#44444c;white-space:nowrap}
.asu-type,.asu-argval small{color:#66666f;font-size:.85rem}
.asu-tree{list-style:none;padding-left:1.1rem!important;margin:.2rem 0!important;border-left:2px solid #e4e4ea}
.asu-esc{background:#ffe58a;color:#5a3d00;border-radius:3px;padding:0 .1rem;font-weight:700}
.asu-flags{list-style:none;padding:0!important;margin:.3rem 0 0!important}
.asu-flags li,.asu-flagline{color:#8a1c00;font-size:.85rem}
.asu-flags li::before{content:"\26A0\FE0E  "}
.asu-domain{margin:.35rem 0 0;font-size:.9rem;padding:.3rem .5rem;border-radius:5px;background:#f7f7f9;overflow-x:auto}
.asu-domain strong{font-weight:800;text-decoration:underline}
.asu-domain.asu-warned{background:#fff0ec;border:1px solid #e8a08e}
.asu-dlabel{color:#66666f}
.asu-dnote{color:#55555f}
.asu-badge{display:inline-block;font-size:.75rem;font-weight:700;border-radius:4px;padding:0 .35rem}
.asu-badge-ok{background:#dff2dc;color:#1f5a19}
.asu-hash{font-size:.8rem}
.asu-unbound{background:#fffbea}
.asu-refs ul,.asu-unbound ul{list-style:none;padding-left:0}
.asu-context dl{display:grid;grid-template-columns:9rem 1fr;gap:.25rem .75rem;margin:0}
.asu-context dt{color:#66666f}
.asu-context dd{margin:0}
.asu-untrusted{background:repeating-linear-gradient(135deg,#f4f4f6,#f4f4f6 10px,#ececf0 10px,#ececf0 20px);border-top:3px dashed #9a9aa5}
.asu-untrusted h3{color:#44444c}
.asu-agent-text{margin:0;padding:.6rem .75rem;background:#fff;border:1px dashed #9a9aa5;border-radius:5px;white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate;font-size:.85rem;color:#33333a;max-height:16rem;overflow:auto}
.asu-none{margin:0;color:#77777f}
.asu-long summary{cursor:pointer}
.asu-foot{padding:.6rem 1.25rem;font-size:.85rem;color:#55555f;background:#f6f6f8}
.asu-summary{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:#17171a;border:2px solid #1d3b66;border-radius:8px;padding:.5rem .75rem;margin:.5rem 0 .75rem;background:#f3f6fb}
.asu-summary p{margin:.15rem 0;overflow-x:auto}
.asu-sum-head{font-size:.75rem;text-transform:uppercase;letter-spacing:.06em;color:#1d3b66}
.asu-sum-label{display:inline-block;min-width:5.5rem;color:#44444c}
.asu-sum-warn{color:#8a1c00}
.asu-badge-warn{background:#fde2dc;color:#8a1c00}
@media (max-width:32rem){.asu-card{margin:0;border-radius:0;font-size:16px}.asu-head,.asu-section,.asu-foot{padding-left:.8rem;padding-right:.8rem}.asu-argtable{display:block}.asu-arg{display:block;border-top:1px solid #f0f0f3;padding:.45rem 0}.asu-arg:first-child{border-top:0}.asu-arghead,.asu-argval{border-top:0;padding:.1rem 0}.asu-context dl{grid-template-columns:1fr}.asu-context dd{margin-bottom:.4rem}}
`
