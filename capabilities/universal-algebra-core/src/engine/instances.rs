//! The laws' ground instances: terms compiled to code, equations numbered by their variables' assignments, and the lines (rows or columns) the hypotheses make permutations.

use super::*;

/// Division by the order through one multiplication: an instance's number is
/// read digit by digit on every evaluation, and a hardware division was a
/// fifth of the search's time.
#[derive(Debug, Clone, Copy)]
pub(super) struct Radix {
    pub(super) n: u32,
    pub(super) magic: u64,
}

impl Radix {
    pub(super) fn new(n: u32) -> Radix {
        Radix { n, magic: (1u64 << 32).div_ceil(u64::from(n)) }
    }

    /// `(i / n, i % n)`, exact whenever `i·n < 2³²` (instance numbers stay
    /// below 2²¹ and orders below 32): `⌈2³²/n⌉ = (2³² + e)/n` with `e < n`, so
    /// `i·⌈2³²/n⌉ / 2³²` exceeds `i / n` by `i·e / (n·2³²) < 1/n`, too little
    /// to reach the next integer.
    pub(super) fn divmod(self, i: u32) -> (u32, u32) {
        let q = ((u64::from(i) * self.magic) >> 32) as u32;
        (q, i - q * self.n)
    }
}

/// A term in postfix order.
#[derive(Debug, Clone, Copy)]
pub(super) enum Code {
    Var(u8),
    Op,
}

pub(super) fn compile(term: &Term, out: &mut Vec<Code>) {
    match term {
        Term::Var(i) => out.push(Code::Var(*i as u8)),
        Term::Op(l, r) => {
            compile(l, out);
            compile(r, out);
            out.push(Code::Op);
        }
    }
}

/// The most operands postfix code holds at once.
pub(super) fn operands(code: &[Code]) -> usize {
    let (mut depth, mut peak) = (0usize, 0usize);
    for unit in code {
        match unit {
            Code::Var(_) => {
                depth += 1;
                peak = peak.max(depth);
            }
            Code::Op => depth -= 1,
        }
    }
    peak
}

/// An equation instantiated over every assignment of its variables, or over
/// one fixed assignment; negated, it must fail there.
#[derive(Debug, Clone)]
pub(crate) struct Equation {
    pub(super) sides: [Vec<Code>; 2],
    /// Where each side's left operand ends (0 for a variable).
    pub(super) splits: [usize; 2],
    pub(super) vars: usize,
    pub(super) negated: bool,
    pub(super) fixed: Option<Vec<u8>>,
}

impl Equation {
    pub(crate) fn holding(lhs: &Term, rhs: &Term, vars: usize) -> Equation {
        let mut sides = [Vec::new(), Vec::new()];
        compile(lhs, &mut sides[0]);
        compile(rhs, &mut sides[1]);
        // Parsed terms nest at most 32 parentheses; a term built in code must fit too.
        assert!(
            sides.iter().all(|code| operands(code) <= STACK),
            "a term holds more than {STACK} operands at once in postfix evaluation"
        );
        let split = |term: &Term| match term {
            Term::Var(_) => 0,
            Term::Op(l, _) => {
                let mut left = Vec::new();
                compile(l, &mut left);
                left.len()
            }
        };
        Equation { sides, splits: [split(lhs), split(rhs)], vars, negated: false, fixed: None }
    }

    pub(crate) fn failing_at(lhs: &Term, rhs: &Term, assignment: Vec<u8>) -> Equation {
        let mut equation = Equation::holding(lhs, rhs, assignment.len());
        equation.negated = true;
        equation.fixed = Some(assignment);
        equation
    }

    /// Ground instances at order `n`, saturating.
    pub(crate) fn instances(&self, n: usize) -> u64 {
        if self.fixed.is_some() { 1 } else { (n as u64).saturating_pow(self.vars as u32) }
    }

    /// Code units, the cost of one evaluation.
    pub(super) fn size(&self) -> u64 {
        (self.sides[0].len() + self.sides[1].len()) as u64
    }
}

/// Hypotheses as the engine takes them: equations, the lines of the table
/// that must be permutations (a quasigroup's, or those a law implies; kept by
/// the domains), and an identity (kept by presets).
pub(crate) struct Hypotheses {
    pub equations: Vec<Equation>,
    pub lines: Lines,
    pub identity: bool,
}

/// Which lines of every model's table are permutations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Lines {
    pub rows: bool,
    pub columns: bool,
}

impl Lines {
    /// The lines a law makes permutations. In `y = t` with `y` a variable
    /// occurring in `t`, the map `y ↦ t` (the other variables fixed) is the
    /// identity. Where `t = a * b` and `y` occurs in `b` only, it is the row
    /// of `a` after `y ↦ b`; a composition that is a bijection of a finite set
    /// has both parts bijections, so that row is a permutation, and so is
    /// `y ↦ b`, which is taken apart the same way. When `a` is a variable it
    /// takes every value: every row is a permutation (every column, for `y`
    /// in `a` only and `b` a variable). Such laws — `x = y * t(x, …)`, or
    /// Higman and Neumann's division axiom for groups, whose path down to `y`
    /// meets both — keep no table the search would otherwise visit, but a
    /// search that does not know them fills lines with repeated values and
    /// learns only much deeper that they fail.
    pub(crate) fn implied(law: &Law) -> Lines {
        fn walk(y: usize, mut t: &Term) -> Lines {
            let mut lines = Lines::default();
            if !t.contains(y) {
                return lines;
            }
            while let Term::Op(l, r) = t {
                t = match (l.contains(y), r.contains(y)) {
                    (false, true) => {
                        lines.rows |= matches!(**l, Term::Var(_));
                        r
                    }
                    (true, false) => {
                        lines.columns |= matches!(**r, Term::Var(_));
                        l
                    }
                    _ => break,
                };
            }
            lines
        }
        match law {
            Law::Quasigroup => Lines { rows: true, columns: true },
            Law::Equation { lhs, rhs, .. } => {
                let side = |var: &Term, t: &Term| match var {
                    Term::Var(y) => walk(*y, t),
                    Term::Op(..) => Lines::default(),
                };
                side(lhs, rhs).or(side(rhs, lhs))
            }
            Law::HasIdentity => Lines::default(),
        }
    }

    pub(super) fn any(self) -> bool {
        self.rows || self.columns
    }

    pub(super) fn or(self, other: Lines) -> Lines {
        Lines { rows: self.rows || other.rows, columns: self.columns || other.columns }
    }
}

impl Hypotheses {
    pub(crate) fn of(laws: &[Law]) -> Hypotheses {
        let equations = laws
            .iter()
            .filter_map(|law| match law {
                Law::Equation { vars, lhs, rhs } => Some(Equation::holding(lhs, rhs, vars.len())),
                _ => None,
            })
            .collect();
        Hypotheses {
            equations,
            lines: laws.iter().map(Lines::implied).fold(Lines::default(), Lines::or),
            identity: laws.contains(&Law::HasIdentity),
        }
    }
}
