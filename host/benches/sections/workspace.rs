//! Workspace writes per second and query latency.

use crate::*;

/// Workspace: writes/second and query latency with 10,000 cards in 200
/// dependency chains of depth 50.
pub(crate) fn workspace_figures() {
    use jacobian::workspace::wire::{OpenRequest, QueryRequest, QueryView, WriteRequest};
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = open(dir.path());
    let w = runtime.workspaces();
    let opened = w
        .open(
            runtime.data(),
            &OpenRequest { idempotency_key: "bench".into(), title: "bench".into(), statement: String::new() },
        )
        .expect("open");
    let ws = opened.workspace_id;
    let mut revision = 0u64;
    let mut write = |entries: serde_json::Value, key: String| {
        let request: WriteRequest = serde_json::from_value(json!({
            "workspace_id": ws, "base_revision": format!("rev-{revision}"), "idempotency_key": key, "entries": entries,
        }))
        .expect("request");
        w.write(runtime.data(), &request).expect("write");
        revision += 1;
    };
    // 100 writes of 100 findings: two chains of 50 per write, each link to the previous card.
    let start = Instant::now();
    let mut card = 1u64;
    for batch in 0..100 {
        let entries: Vec<serde_json::Value> = (0..100)
            .map(|i| {
                card += 1;
                let depends_on = if i % 50 == 0 { vec![] } else { vec![format!("card-{}", card - 1)] };
                json!({"type": "finding", "kind": "LEMMA", "title": format!("lemma {card}"), "body": "a short body", "depends_on": depends_on})
            })
            .collect();
        write(json!(entries), format!("batch-{batch}"));
    }
    let batch_seconds = start.elapsed().as_secs_f64();
    // Single-entry writes against the 10,000-card workspace.
    let start = Instant::now();
    for i in 0..200 {
        write(
            json!([{"type": "attempt", "target": format!("card-{}", 2 + i * 50), "method": "m", "outcome": "COMPLETED", "summary": ""}]),
            format!("single-{i}"),
        );
    }
    let single_seconds = start.elapsed().as_secs_f64();
    let query = |view: QueryView, target: Option<String>| {
        let request =
            QueryRequest { workspace_id: ws.clone(), view, revision_id: None, target_card_id: target, limit: Some(50) };
        let samples: Vec<Duration> =
            (0..200).map(|_| time(|| w.query(runtime.data(), &request).expect("query"))).collect();
        percentiles(samples)
    };
    let (context50, context99) = query(QueryView::Context, Some("card-10001".into()));
    let (resume50, resume99) = query(QueryView::Resume, None);
    let (stale50, stale99) = query(QueryView::Stale, None);
    println!("workspace with 10,000 cards in 200 chains of depth 50 (SQLite WAL, synchronous=FULL):");
    println!(
        "  writes of 100 findings: {:.0} writes/s ({:.0} findings/s)",
        100.0 / batch_seconds,
        10_000.0 / batch_seconds
    );
    println!("  single-entry writes at 10,000 cards: {:.0} writes/s", 200.0 / single_seconds);
    println!("  CONTEXT (closure of depth 50): p50 {context50:.0} µs  p99 {context99:.0} µs");
    println!("  RESUME: p50 {resume50:.0} µs  p99 {resume99:.0} µs;  STALE: p50 {stale50:.0} µs  p99 {stale99:.0} µs");
}
