//! Backtracking over Cayley tables, cell by cell in row-major order, pruning
//! every partial table that already violates a hypothesis.

use crate::laws::{self, Law, Table};

/// What a search over orders `min_order..=max_order` found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The first countermodel: its order, its table and the target's violation.
    pub found: Option<Countermodel>,
    /// The orders every table of which was examined without a countermodel.
    pub orders_exhausted: Vec<u8>,
    /// Whether the node budget ended the search.
    pub budget_exhausted: bool,
    /// Cells tried, over all orders.
    pub nodes: u64,
}

/// A magma satisfying every hypothesis and violating the target.
#[derive(Debug, Clone, PartialEq)]
pub struct Countermodel {
    pub order: u8,
    /// `table[a][b]` is `a*b`.
    pub table: Vec<Vec<u8>>,
    /// Where the target fails (see [`laws::violation`]).
    pub witness: serde_json::Value,
}

/// Search orders `min_order..=max_order` in turn, trying at most `max_nodes`
/// cells in all.
pub fn find(hypotheses: &[Law], target: &Law, min_order: u8, max_order: u8, max_nodes: u64) -> Outcome {
    let mut outcome = Outcome { found: None, orders_exhausted: Vec::new(), budget_exhausted: false, nodes: 0 };
    for order in min_order..=max_order {
        let n = usize::from(order);
        let mut search = Search {
            table: Table { n, cells: vec![None; n * n] },
            hypotheses,
            target,
            nodes: outcome.nodes,
            max_nodes,
        };
        let step = search.fill(0);
        outcome.nodes = search.nodes;
        match step {
            Step::Found(witness) => {
                let table =
                    (0..n).map(|a| (0..n).map(|b| search.table.cells[a * n + b].unwrap_or(0)).collect()).collect();
                outcome.found = Some(Countermodel { order, table, witness });
                return outcome;
            }
            Step::Exhausted => outcome.orders_exhausted.push(order),
            Step::OutOfNodes => {
                outcome.budget_exhausted = true;
                return outcome;
            }
        }
    }
    outcome
}

enum Step {
    Found(serde_json::Value),
    Exhausted,
    OutOfNodes,
}

struct Search<'a> {
    table: Table,
    hypotheses: &'a [Law],
    target: &'a Law,
    nodes: u64,
    max_nodes: u64,
}

impl Search<'_> {
    fn fill(&mut self, cell: usize) -> Step {
        if cell == self.table.cells.len() {
            return match laws::violation(self.target, &self.table) {
                Some(witness) => Step::Found(witness),
                None => Step::Exhausted,
            };
        }
        for value in 0..self.table.n as u8 {
            self.nodes += 1;
            if self.nodes > self.max_nodes {
                return Step::OutOfNodes;
            }
            self.table.cells[cell] = Some(value);
            if self.hypotheses.iter().any(|h| laws::violated_by_partial(h, &self.table)) {
                continue;
            }
            match self.fill(cell + 1) {
                Step::Exhausted => {}
                other => return other,
            }
        }
        self.table.cells[cell] = None;
        Step::Exhausted
    }
}
