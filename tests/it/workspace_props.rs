//! Property tests: the workspace's lifecycle rules and stale propagation
//! against a small reference model written independently here.

use jacobian::contract::Code;
use jacobian::workspace::model::State;
use jacobian::workspace::wire::{Entry, FindingKind, MarkKind};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RefKind {
    Goal,
    Question,
    Other,
}

/// The reference: one line per rule of the contract.
#[derive(Debug, Clone)]
struct Reference {
    kinds: Vec<RefKind>,
    links: Vec<Vec<usize>>,
    states: Vec<MarkKind>,
}

impl Reference {
    fn new() -> Self {
        Reference { kinds: vec![RefKind::Goal], links: vec![vec![]], states: vec![MarkKind::Active] }
    }

    fn mark(&mut self, card: usize, mark: MarkKind, reason: bool, replacement: usize) -> Result<(), Code> {
        if !reason {
            return Err(Code::MissingReason);
        }
        if mark == MarkKind::Superseded && replacement == card {
            return Err(Code::InvalidRequest);
        }
        let invalidating = matches!(self.states[card], MarkKind::Retracted | MarkKind::Superseded);
        if mark == MarkKind::Closed && self.kinds[card] == RefKind::Other {
            return Err(Code::MarkNotAllowed);
        }
        if matches!(mark, MarkKind::Closed | MarkKind::Archived) && invalidating {
            return Err(Code::MarkNotAllowed);
        }
        self.states[card] = mark;
        Ok(())
    }

    /// Stale: some link leads to a current root, directly or through a stale
    /// card. Links only point to older cards, so one ascending pass suffices.
    fn stale(&self) -> Vec<usize> {
        let root = |c: usize| matches!(self.states[c], MarkKind::Retracted | MarkKind::Superseded);
        let mut stale = vec![false; self.kinds.len()];
        for c in 0..self.kinds.len() {
            stale[c] = self.links[c].iter().any(|&d| root(d) || stale[d]);
        }
        (0..stale.len()).filter(|&c| stale[c]).collect()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add { question: bool, links: Vec<(usize, bool)> },
    Mark { card: usize, mark: MarkKind, reason: bool, replacement: usize },
}

fn op() -> impl Strategy<Value = Op> {
    let mark = prop_oneof![
        Just(MarkKind::Active),
        Just(MarkKind::Closed),
        Just(MarkKind::Retracted),
        Just(MarkKind::Superseded),
        Just(MarkKind::Archived),
    ];
    prop_oneof![
        (any::<bool>(), prop::collection::vec((0usize..64, any::<bool>()), 0..4))
            .prop_map(|(question, links)| Op::Add { question, links }),
        (0usize..64, mark, prop::bool::weighted(0.9), 0usize..64)
            .prop_map(|(card, mark, reason, replacement)| Op::Mark { card, mark, reason, replacement }),
    ]
}

fn id(index: usize) -> String {
    format!("card-{}", index + 1)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn lifecycle_and_staleness_match_the_reference(ops in prop::collection::vec(op(), 1..40)) {
        let mut state = State::open("goal", "").expect("opens");
        let mut reference = Reference::new();
        for op in ops {
            let n = reference.kinds.len();
            let (entry, expected) = match &op {
                Op::Add { question, links } => {
                    let (mut depends_on, mut assumptions) = (Vec::new(), Vec::new());
                    let mut targets = Vec::new();
                    for (seed, assumed) in links {
                        let target = seed % n;
                        if !targets.contains(&target) { targets.push(target); }
                        if *assumed { assumptions.push(id(target)) } else { depends_on.push(id(target)) }
                    }
                    let kind = if *question { FindingKind::OpenQuestion } else { FindingKind::Lemma };
                    let entry = Entry::Finding { client_ref: None, kind, title: "t".into(), body: String::new(), depends_on, assumptions };
                    reference.kinds.push(if *question { RefKind::Question } else { RefKind::Other });
                    reference.links.push(targets);
                    reference.states.push(MarkKind::Active);
                    (entry, Ok(()))
                }
                Op::Mark { card, mark, reason, replacement } => {
                    let (card, replacement) = (card % n, replacement % n);
                    let entry = Entry::Mark {
                        card: id(card),
                        mark: *mark,
                        reason: if *reason { "because".into() } else { String::new() },
                        replacement: (*mark == MarkKind::Superseded).then(|| id(replacement)),
                    };
                    (entry, reference.mark(card, *mark, *reason, replacement))
                }
            };
            match (state.apply(&[entry]), expected) {
                (Ok(applied), Ok(())) => state = applied.state,
                (Err(e), Err(code)) => prop_assert_eq!(e.code, code, "{:?}: {}", op, e.message),
                (got, want) => prop_assert!(false, "{:?}: model {:?}, reference {:?}", op, got.map(|_| ()).map_err(|e| e.code), want),
            }
            let model_stale: Vec<usize> = state.stale().keys().map(|n| (*n - 1) as usize).collect();
            prop_assert_eq!(model_stale, reference.stale(), "after {:?}", op);
            for (i, card) in state.cards.iter().enumerate() {
                prop_assert_eq!(card.state(), reference.states[i]);
            }
        }
    }
}
