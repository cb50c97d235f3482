//! Drawing a workspace for people: Graphviz DOT, a self-contained SVG with
//! a layered layout (dependencies below their dependents, arrows routed
//! around the boxes, attempts optional), or an HTML page around the SVG.

use std::fmt::Write as _;

use super::model::{State, attempt_id, card_id};
use super::wire::{AttemptOutcome, MarkKind};

fn colour(state: MarkKind, stale: bool) -> (&'static str, &'static str) {
    // (fill, stroke)
    match state {
        MarkKind::Retracted => ("#fde2e1", "#c0392b"),
        MarkKind::Superseded => ("#fdebd0", "#d35400"),
        MarkKind::Archived => ("#eeeeee", "#888888"),
        MarkKind::Closed => ("#e3f4e1", "#2e7d32"),
        MarkKind::Active if stale => ("#fff6bf", "#b7950b"),
        MarkKind::Active => ("#ffffff", "#34495e"),
    }
}

fn label(text: &str, max: usize) -> String {
    let clipped: String = text.chars().take(max).collect();
    let clipped = if text.chars().count() > max { format!("{clipped}…") } else { clipped };
    clipped.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Graphviz DOT: cards, dependency (solid) and assumption (dashed) links,
/// supersession (dotted, to the replacement), marks and stale cards.
pub fn dot(state: &State) -> String {
    let stale = state.stale();
    let mut out = String::from(
        "digraph workspace {\n  rankdir=BT;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n",
    );
    for card in &state.cards {
        let is_stale = stale.contains_key(&card.number);
        let (fill, stroke) = colour(card.state(), is_stale);
        let mut state_label = format!("{:?}", card.state()).to_ascii_uppercase();
        if is_stale {
            state_label.push_str(", STALE");
        }
        let _ = writeln!(
            out,
            "  \"{id}\" [label=\"{id} · {kind:?}\\n{title}\\n[{state_label}]\", fillcolor=\"{fill}\", color=\"{stroke}\"];",
            id = card_id(card.number),
            kind = card.kind,
            title = label(&card.title, 40),
        );
    }
    for card in &state.cards {
        for d in &card.depends_on {
            let _ = writeln!(out, "  \"{}\" -> \"{}\" [label=\"depends on\"];", card_id(card.number), card_id(*d));
        }
        for a in &card.assumptions {
            let _ = writeln!(
                out,
                "  \"{}\" -> \"{}\" [label=\"assumes\", style=dashed];",
                card_id(card.number),
                card_id(*a)
            );
        }
        if let Some(r) = card.marks.last().and_then(|m| m.replacement).filter(|_| card.state() == MarkKind::Superseded)
        {
            let _ = writeln!(
                out,
                "  \"{}\" -> \"{}\" [label=\"superseded by\", style=dotted];",
                card_id(card.number),
                card_id(r)
            );
        }
    }
    out.push_str("}\n");
    out
}

/// What a drawing shows beyond the cards and their links.
#[derive(Debug, Clone, Copy, Default)]
pub struct Drawing {
    /// Each attempt as a box above the card it attempted, linked to it.
    pub attempts: bool,
}

/// One box of the drawing: a card, or an attempt.
struct Node {
    id: String,
    layer: usize,
    column: usize,
}

/// One arrow: from a node to a node below it, how it is drawn and what it says.
struct Link {
    from: usize,
    to: usize,
    dash: &'static str,
    colour: &'static str,
    says: &'static str,
}

const BOX_W: usize = 220;
const BOX_H: usize = 56;
const GAP_X: usize = 40;
const GAP_Y: usize = 64;

fn attempt_colour(outcome: AttemptOutcome) -> (&'static str, &'static str) {
    match outcome {
        AttemptOutcome::Completed => ("#eef6ff", "#2f6fad"),
        AttemptOutcome::Failed => ("#fdecea", "#c0392b"),
        AttemptOutcome::Abandoned | AttemptOutcome::Blocked => ("#f4f4f4", "#777777"),
        AttemptOutcome::Inconclusive => ("#fff8e1", "#b7950b"),
    }
}

/// The nodes (cards, then attempts when drawn), in layers: a node sits one
/// layer above the highest node it links to, so every arrow points down.
fn layout(state: &State, drawing: Drawing) -> (Vec<Node>, Vec<Link>) {
    let index: std::collections::BTreeMap<u64, usize> =
        state.cards.iter().enumerate().map(|(i, c)| (c.number, i)).collect();
    let (mut nodes, mut links) = (Vec::<Node>::new(), Vec::new());
    for (i, card) in state.cards.iter().enumerate() {
        let below = card.depends_on.iter().map(|d| (d, "", "#555555", "depends on"));
        let assumed = card.assumptions.iter().map(|a| (a, "6 4", "#555555", "assumes"));
        let mut layer = 0;
        for (target, dash, colour, says) in below.chain(assumed) {
            let Some(&to) = index.get(target) else { continue };
            layer = layer.max(nodes[to].layer + 1);
            links.push(Link { from: i, to, dash, colour, says });
        }
        nodes.push(Node { id: card_id(card.number), layer, column: 0 });
    }
    if drawing.attempts {
        for attempt in &state.attempts {
            let Some(&to) = index.get(&attempt.target) else { continue };
            links.push(Link {
                from: nodes.len(),
                to,
                dash: "2 4",
                colour: attempt_colour(attempt.outcome).1,
                says: "attempted",
            });
            nodes.push(Node { id: attempt_id(attempt.number), layer: nodes[to].layer + 1, column: 0 });
        }
    }
    let mut columns = Vec::<usize>::new();
    for node in &mut nodes {
        if columns.len() <= node.layer {
            columns.resize(node.layer + 1, 0);
        }
        node.column = columns[node.layer];
        columns[node.layer] += 1;
    }
    (nodes, links)
}

/// A self-contained SVG of the same graph, dependencies below their
/// dependents. Every arrow is routed through the gaps between rows and
/// columns, never across a box; every box and arrow carries its full text as
/// a `<title>` tooltip.
pub fn svg(state: &State, drawing: Drawing) -> String {
    let stale = state.stale();
    let (nodes, links) = layout(state, drawing);
    let layers = nodes.iter().map(|n| n.layer + 1).max().unwrap_or(1);
    let widest = (0..layers).map(|l| nodes.iter().filter(|n| n.layer == l).count()).max().unwrap_or(1).max(1);
    let width = widest * (BOX_W + GAP_X) + GAP_X;
    let height = layers * (BOX_H + GAP_Y) + GAP_Y;
    let left = |n: &Node| GAP_X + n.column * (BOX_W + GAP_X);
    let top = |layer: usize| height - (GAP_Y + layer * (BOX_H + GAP_Y) + BOX_H);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"Helvetica, sans-serif\" font-size=\"12\">\n\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/></marker></defs>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n"
    );
    // Where each arrow leaves its source and reaches its target: spread along the box's edge.
    let spread = |ends: &dyn Fn(&Link) -> usize| {
        let mut seen = vec![0usize; nodes.len()];
        let totals = links.iter().fold(vec![0usize; nodes.len()], |mut t, l| {
            t[ends(l)] += 1;
            t
        });
        links
            .iter()
            .map(|l| {
                let node = ends(l);
                seen[node] += 1;
                left(&nodes[node]) + seen[node] * BOX_W / (totals[node] + 1)
            })
            .collect::<Vec<usize>>()
    };
    let (starts, ends) = (spread(&|l: &Link| l.from), spread(&|l: &Link| l.to));
    for (k, link) in links.iter().enumerate() {
        let (from, to) = (&nodes[link.from], &nodes[link.to]);
        // Down from the source into the gap below its row; along that gap; down
        // a lane in the gap left of the target's column to the gap above the
        // target's row; along it; down into the target. Offsets keep parallel
        // arrows apart without leaving the gaps.
        let jitter = (k % 5) * 6;
        let below_source = top(from.layer) + BOX_H + GAP_Y / 2 - 12 + jitter;
        let above_target = top(to.layer) - GAP_Y / 2 - 12 + jitter;
        let (xs, xt) = (starts[k], ends[k]);
        let mut d = format!("M {xs} {} L {xs} {below_source}", top(from.layer) + BOX_H);
        if from.layer == to.layer + 1 {
            let _ = write!(d, " L {xt} {below_source}");
        } else {
            let lane = to.column * (BOX_W + GAP_X) + 8 + (k % 4) * 8;
            let _ = write!(d, " L {lane} {below_source} L {lane} {above_target} L {xt} {above_target}");
        }
        let _ = write!(d, " L {xt} {}", top(to.layer));
        let dash = if link.dash.is_empty() { String::new() } else { format!(" stroke-dasharray=\"{}\"", link.dash) };
        let _ = writeln!(
            out,
            "<path class=\"link\" data-from=\"{}\" data-to=\"{}\" d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{dash} marker-end=\"url(#arrow)\"><title>{} {} {}</title></path>",
            from.id, to.id, link.colour, from.id, link.says, to.id
        );
    }
    for (card, node) in state.cards.iter().zip(&nodes) {
        let is_stale = stale.contains_key(&card.number);
        let (fill, stroke) = colour(card.state(), is_stale);
        let mut state_label = format!("{:?}", card.state()).to_ascii_uppercase();
        if is_stale {
            state_label.push_str(" · STALE");
        }
        let tooltip = format!("{} · {:?} · {state_label}\n{}", node.id, card.kind, card.title);
        let head = format!("{} · {:?}", node.id, card.kind);
        boxed(
            &mut out,
            "card",
            node,
            (left(node), top(node.layer)),
            (fill, stroke, "8", ""),
            &tooltip,
            [&head, &card.title, &state_label],
        );
    }
    for (attempt, node) in state.attempts.iter().zip(nodes.iter().skip(state.cards.len())) {
        let (fill, stroke) = attempt_colour(attempt.outcome);
        let outcome = format!("{:?}", attempt.outcome).to_ascii_uppercase();
        let tooltip =
            format!("{} of {} · {outcome}\n{}\n{}", node.id, card_id(attempt.target), attempt.method, attempt.summary);
        let head = format!("{} · {outcome}", node.id);
        boxed(
            &mut out,
            "attempt",
            node,
            (left(node), top(node.layer)),
            (fill, stroke, "20", " stroke-dasharray=\"4 3\""),
            &tooltip,
            [&head, &attempt.method, &attempt.summary],
        );
    }
    out.push_str("</svg>\n");
    out
}

/// One box: its tooltip, its outline and three lines of (clipped) text.
fn boxed(
    out: &mut String,
    class: &str,
    node: &Node,
    (x, y): (usize, usize),
    (fill, stroke, radius, dash): (&str, &str, &str, &str),
    tooltip: &str,
    [head, middle, foot]: [&str; 3],
) {
    let centre = x + BOX_W / 2;
    let _ = writeln!(
        out,
        "<g class=\"{class}\" id=\"{id}\"><title>{tooltip}</title>\
         <rect x=\"{x}\" y=\"{y}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"{radius}\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"2\"{dash}/>\
         <text x=\"{centre}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>\
         <text x=\"{centre}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
         <text x=\"{centre}\" y=\"{}\" text-anchor=\"middle\" fill=\"{stroke}\">{}</text></g>",
        y + 18,
        label(head, 32),
        y + 34,
        label(middle, 32),
        y + 49,
        label(foot, 32),
        id = node.id,
        tooltip = label(tooltip, usize::MAX),
    );
}

/// A self-contained HTML page of the drawing, to open in a browser: the
/// workspace and revision, a legend, and the SVG inline (hover a box or an
/// arrow for its full text).
pub fn html(state: &State, workspace_id: &str, drawing: Drawing) -> String {
    let title = label(&format!("{workspace_id} at rev-{}", state.revision), usize::MAX);
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\n\
         <style>body{{font-family:Helvetica,sans-serif;margin:24px;background:#fafafa;color:#222}}\
         h1{{font-size:18px}} .legend{{font-size:13px;color:#555}} svg{{display:block}}</style></head>\n\
         <body><h1>{title}</h1>\n<p class=\"legend\">{} cards{}. Solid arrow: depends on; dashed: assumes; dotted: \
         attempted. Green: closed; red: retracted; orange: superseded; yellow: stale (something below it was \
         retracted or superseded); grey: archived. Hover a box or an arrow for its full text.</p>\n{}</body></html>\n",
        state.cards.len(),
        if drawing.attempts { format!(", {} attempts", state.attempts.len()) } else { String::new() },
        svg(state, drawing)
    )
}
