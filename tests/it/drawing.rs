//! The workspace drawing as a person sees it: the HTML page of
//! `jacobian workspace graph --format html --attempts`, laid out by a real
//! browser (Debian's headless `chromium`), and checked from the geometry the
//! browser computed: every box visible and clear of every other, every arrow
//! clear of every box, every box's full text in its tooltip.

use std::path::Path;
use std::process::Command;

use jacobian::workspace::wire::{OpenRequest, WriteRequest};
use serde_json::{Value, json};

use crate::support::{self, cli};

/// Measures the page once it is laid out and writes the findings into `<pre id="report">`.
const MEASURE: &str = r#"<script>
(() => {
  const inside = (p, r) => p.x > r.left + 1.5 && p.x < r.right - 1.5 && p.y > r.top + 1.5 && p.y < r.bottom - 1.5;
  const page = { w: document.documentElement.scrollWidth, h: document.documentElement.scrollHeight };
  const boxes = [...document.querySelectorAll("g.card, g.attempt")].map(g => ({
    id: g.id, rect: g.querySelector("rect").getBoundingClientRect(), tooltip: g.querySelector("title").textContent,
  }));
  const invisible = boxes.filter(b => !(b.rect.width > 0 && b.rect.height > 0 && b.rect.left >= 0 && b.rect.top >= 0
    && b.rect.right <= page.w && b.rect.bottom <= page.h)).map(b => b.id);
  const overlapping = [];
  boxes.forEach((a, i) => boxes.slice(i + 1).forEach(b => {
    if (a.rect.left < b.rect.right && b.rect.left < a.rect.right && a.rect.top < b.rect.bottom && b.rect.top < a.rect.bottom)
      overlapping.push([a.id, b.id]);
  }));
  const crossings = [];
  const links = [...document.querySelectorAll("path.link")];
  for (const path of links) {
    const matrix = path.getScreenCTM();
    const length = path.getTotalLength();
    for (let s = 0; s <= length; s += 1) {
      const q = path.getPointAtLength(s);
      const p = new DOMPoint(q.x, q.y).matrixTransform(matrix);
      const hit = boxes.find(b => inside(p, b.rect));
      if (hit) { crossings.push([path.dataset.from, path.dataset.to, hit.id]); break; }
    }
  }
  const report = document.createElement("pre");
  report.id = "report";
  report.textContent = JSON.stringify({ boxes: boxes.map(b => ({ id: b.id, tooltip: b.tooltip })), links: links.length,
    invisible, overlapping, crossings });
  document.body.appendChild(report);
})();
</script>"#;

/// Load `html` (with the measuring script) in headless chromium; the report.
fn measured(dir: &Path, name: &str, html: &str) -> Value {
    let page = dir.join(name);
    std::fs::write(&page, html.replace("</body>", &format!("{MEASURE}</body>"))).unwrap();
    let output = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1600,1200", "--dump-dom"])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium (Debian: chromium)");
    let dom = String::from_utf8_lossy(&output.stdout);
    let report =
        dom.split("<pre id=\"report\">").nth(1).and_then(|rest| rest.split("</pre>").next()).unwrap_or_else(|| {
            panic!("no report in the page chromium laid out: {}", String::from_utf8_lossy(&output.stderr))
        });
    let report = report.replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    serde_json::from_str(&report).expect("the report is JSON")
}

#[test]
fn the_html_drawing_keeps_every_box_visible_and_every_arrow_clear_of_the_boxes() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let long = "Every commutative magma satisfying x*(x*y) = y is associative, which a four-element model refutes";
    let runtime = support::open(data.clone());
    let open = OpenRequest { idempotency_key: "k".into(), title: "Decide".into(), statement: "Is it?".into() };
    let opened = json!(runtime.workspaces().open(runtime.data(), &open).expect("opens"));
    let ws = opened["workspace_id"].as_str().unwrap().to_owned();
    // One column of dependencies (card-4 -> card-1 would cross card-2 and card-3 if drawn straight),
    // side branches, a retracted lemma (its dependents stale), and attempts of several outcomes.
    let entries = json!([
        {"type": "finding", "client_ref": "a", "kind": "LEMMA", "title": "x*x = x", "depends_on": ["card-1"]},
        {"type": "finding", "client_ref": "b", "kind": "LEMMA", "title": "x*(x*y) = y", "depends_on": ["a"]},
        {"type": "finding", "client_ref": "c", "kind": "CLAIM", "title": long, "depends_on": ["b", "card-1"], "assumptions": ["a"]},
        {"type": "finding", "client_ref": "d", "kind": "LEMMA", "title": "side lemma", "depends_on": ["card-1"]},
        {"type": "finding", "kind": "CLAIM", "title": "uses the side lemma", "depends_on": ["d", "card-1"]},
        {"type": "finding", "kind": "OPEN_QUESTION", "title": "order 5?", "depends_on": ["c", "a"]},
        {"type": "mark", "card": "b", "mark": "RETRACTED", "reason": "a counterexample of order 3"},
        {"type": "attempt", "target": "c", "method": "universal_algebra.search.countermodel", "outcome": "COMPLETED", "summary": "a model of order 4"},
        {"type": "attempt", "target": "card-1", "method": "by hand", "outcome": "FAILED", "summary": "no idea"},
        {"type": "attempt", "target": "c", "method": "sat.solve", "outcome": "INCONCLUSIVE", "summary": "budget spent"},
    ]);
    let request: WriteRequest = serde_json::from_value(json!({
        "workspace_id": ws, "base_revision": "rev-0", "idempotency_key": "w", "entries": entries,
    }))
    .unwrap();
    runtime.workspaces().write(runtime.data(), &request).expect("writes");
    drop(runtime);

    let html = cli(&data, &["workspace", "graph", &ws, "--format", "html", "--attempts"]);
    assert!(html.starts_with("<!doctype html>") && html.contains("<svg"), "{html}");
    let report = measured(dir.path(), "workspace.html", &html);
    let boxes = report["boxes"].as_array().unwrap();
    assert_eq!(boxes.len(), 7 + 3, "seven cards and three attempts: {report}");
    assert_eq!(report["links"], 10 + 3, "ten links between cards and three attempts: {report}");
    assert_eq!(report["invisible"], json!([]), "{report}");
    assert_eq!(report["overlapping"], json!([]), "{report}");
    assert_eq!(report["crossings"], json!([]), "{report}");
    let claim = boxes.iter().find(|b| b["id"] == "card-4").expect("card-4");
    assert!(claim["tooltip"].as_str().unwrap().contains(long), "the full title is the tooltip: {claim}");
    let attempt = boxes.iter().find(|b| b["id"] == "attempt-1").expect("attempt-1");
    assert!(attempt["tooltip"].as_str().unwrap().contains("universal_algebra.search.countermodel"), "{attempt}");

    // The measurement sees a crossing when there is one: a straight line from card-4 to card-1.
    let straight = html.replacen(
        "<path class=\"link\"",
        "<path class=\"link\" data-from=\"card-4\" data-to=\"card-1\" d=\"M 150 100 L 150 900\" stroke=\"red\"/><path class=\"link\"",
        1,
    );
    let report = measured(dir.path(), "straight.html", &straight);
    let crossings = report["crossings"].as_array().unwrap();
    assert!(crossings.iter().any(|c| c[0] == "card-4" && c[1] == "card-1"), "{report}");
}
