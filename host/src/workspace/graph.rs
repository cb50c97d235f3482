//! Drawing a workspace for people: Graphviz DOT, or a self-contained SVG
//! with a layered layout (dependencies above their dependents).

use std::fmt::Write as _;

use super::model::{State, card_id};
use super::wire::MarkKind;

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

/// A self-contained SVG of the same graph.
pub fn svg(state: &State) -> String {
    let stale = state.stale();
    // Layer = longest chain of links below the card (links point to older cards).
    let mut layer = vec![0usize; state.cards.len() + 1];
    for card in &state.cards {
        let below = card.depends_on.iter().chain(&card.assumptions).map(|d| layer[*d as usize] + 1).max().unwrap_or(0);
        layer[card.number as usize] = below;
    }
    let layers = layer.iter().copied().max().unwrap_or(0) + 1;
    let mut columns = vec![0usize; layers];
    let mut position = vec![(0usize, 0usize); state.cards.len() + 1];
    for card in &state.cards {
        let l = layer[card.number as usize];
        position[card.number as usize] = (columns[l], l);
        columns[l] += 1;
    }
    let (w, h, gap_x, gap_y) = (220usize, 56usize, 30usize, 60usize);
    let width = columns.iter().copied().max().unwrap_or(1).max(1) * (w + gap_x) + gap_x;
    let height = layers * (h + gap_y) + gap_y;
    let centre = |n: u64| {
        let (c, l) = position[n as usize];
        let x = gap_x + c * (w + gap_x) + w / 2;
        let y = height - (gap_y + l * (h + gap_y) + h / 2);
        (x, y)
    };
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"Helvetica, sans-serif\" font-size=\"12\">\n\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/></marker></defs>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n"
    );
    for card in &state.cards {
        let (x1, y1) = centre(card.number);
        let links = card
            .depends_on
            .iter()
            .map(|d| (*d, ""))
            .chain(card.assumptions.iter().map(|a| (*a, " stroke-dasharray=\"6 4\"")));
        for (target, dash) in links {
            let (x2, y2) = centre(target);
            let _ = writeln!(
                out,
                "<line x1=\"{x1}\" y1=\"{}\" x2=\"{x2}\" y2=\"{}\" stroke=\"#555\"{dash} marker-end=\"url(#arrow)\"/>",
                y1 + h / 2,
                y2 - h / 2
            );
        }
    }
    for card in &state.cards {
        let (x, y) = centre(card.number);
        let is_stale = stale.contains_key(&card.number);
        let (fill, stroke) = colour(card.state(), is_stale);
        let mut state_label = format!("{:?}", card.state()).to_ascii_uppercase();
        if is_stale {
            state_label.push_str(" · STALE");
        }
        let _ = writeln!(
            out,
            "<g><rect x=\"{}\" y=\"{}\" width=\"{w}\" height=\"{h}\" rx=\"8\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"2\"/>\
             <text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\">{} · {:?}</text>\
             <text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
             <text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" fill=\"{stroke}\">{state_label}</text></g>",
            x - w / 2,
            y - h / 2,
            y - 10,
            card_id(card.number),
            card.kind,
            y + 6,
            label(&card.title, 32),
            y + 21,
        );
    }
    out.push_str("</svg>\n");
    out
}
