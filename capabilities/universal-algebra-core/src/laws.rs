//! Laws of one binary operation `*`: named properties and equations between terms.
//!
//! Syntax of an equation: `term = term`, where a term is a variable (lowercase
//! letters, optionally followed by digits), `term * term`, or `( term )`;
//! `*` associates to the left, so `x*y*z` means `(x*y)*z`.

use std::collections::BTreeMap;

/// A term over variables (by index) and the operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    Var(usize),
    Op(Box<Term>, Box<Term>),
}

impl Term {
    /// Whether variable `var` occurs in the term.
    pub fn contains(&self, var: usize) -> bool {
        match self {
            Term::Var(v) => *v == var,
            Term::Op(l, r) => l.contains(var) || r.contains(var),
        }
    }
}

/// A parsed law.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Law {
    /// For all assignments of `vars`, `lhs = rhs`.
    Equation { vars: Vec<String>, lhs: Term, rhs: Term },
    /// There is e with e*x = x = x*e for all x.
    HasIdentity,
    /// Every row and every column of the table is a permutation (Latin square).
    Quasigroup,
}

/// The named laws and their meaning, for descriptors and error messages.
pub const NAMED_LAWS: &[(&str, &str)] = &[
    ("associative", "x*(y*z) = (x*y)*z"),
    ("commutative", "x*y = y*x"),
    ("idempotent", "x*x = x"),
    ("left_alternative", "x*(x*y) = (x*x)*y"),
    ("right_alternative", "(y*x)*x = y*(x*x)"),
    ("flexible", "x*(y*x) = (x*y)*x"),
    ("has_identity", "there is e with e*x = x = x*e for all x"),
    ("quasigroup", "every equation a*x = b and y*a = b has a unique solution"),
];

/// Parse a law given by name or as an equation.
pub fn parse(text: &str) -> Result<Law, String> {
    let text = text.trim();
    match text {
        "has_identity" => return Ok(Law::HasIdentity),
        "quasigroup" => return Ok(Law::Quasigroup),
        _ => {}
    }
    if let Some((_, equation)) = NAMED_LAWS.iter().find(|(name, _)| *name == text) {
        return parse_equation(equation);
    }
    if text.contains('=') {
        return parse_equation(text);
    }
    let names: Vec<&str> = NAMED_LAWS.iter().map(|(n, _)| *n).collect();
    Err(format!("unknown law {text:?}: use one of {} or an equation such as \"x*(y*z) = (x*y)*z\"", names.join(", ")))
}

fn parse_equation(text: &str) -> Result<Law, String> {
    let (left, right) = text.split_once('=').ok_or_else(|| "an equation needs exactly one '='".to_owned())?;
    if right.contains('=') {
        return Err("an equation needs exactly one '='".to_owned());
    }
    let mut vars = Vec::new();
    let lhs = Parser::new(left, &mut vars).parse_all()?;
    let rhs = Parser::new(right, &mut vars).parse_all()?;
    if vars.len() > 6 {
        return Err(format!("at most 6 variables per equation, found {}", vars.len()));
    }
    Ok(Law::Equation { vars, lhs, rhs })
}

/// Products one side of an equation may have: a chain `x*x*…` nests to the
/// left without parentheses, and every pass over a term (compiling,
/// evaluating, dropping it) recurses that deep.
pub const MAX_PRODUCTS: usize = 256;

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    products: usize,
    vars: &'a mut Vec<String>,
}

impl<'a> Parser<'a> {
    fn new(text: &str, vars: &'a mut Vec<String>) -> Self {
        // Blanks separate tokens and are otherwise ignored: `x y` is two operands (refused), never one name `xy`.
        Parser {
            chars: text.chars().map(|c| if c.is_whitespace() { ' ' } else { c }).collect(),
            pos: 0,
            products: 0,
            vars,
        }
    }

    /// The next character after any blanks.
    fn peek(&mut self) -> Option<char> {
        while self.chars.get(self.pos) == Some(&' ') {
            self.pos += 1;
        }
        self.chars.get(self.pos).copied()
    }

    fn parse_all(mut self) -> Result<Term, String> {
        let term = self.term(0)?;
        match self.peek() {
            None => Ok(term),
            Some(c) => Err(format!("unexpected {c:?} after a complete term")),
        }
    }

    fn term(&mut self, depth: usize) -> Result<Term, String> {
        if depth > 32 {
            return Err("term nested deeper than 32".to_owned());
        }
        let mut left = self.atom(depth)?;
        while self.peek() == Some('*') {
            self.pos += 1;
            self.products += 1;
            if self.products > MAX_PRODUCTS {
                return Err(format!("a side with more than {MAX_PRODUCTS} products"));
            }
            let right = self.atom(depth)?;
            left = Term::Op(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn atom(&mut self, depth: usize) -> Result<Term, String> {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let inner = self.term(depth + 1)?;
                if self.peek() != Some(')') {
                    return Err("missing ')'".to_owned());
                }
                self.pos += 1;
                Ok(inner)
            }
            Some(c) if c.is_ascii_lowercase() => {
                let start = self.pos;
                while self
                    .chars
                    .get(self.pos)
                    .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                {
                    self.pos += 1;
                }
                let name: String = self.chars[start..self.pos].iter().collect();
                let index = match self.vars.iter().position(|v| *v == name) {
                    Some(i) => i,
                    None => {
                        self.vars.push(name);
                        self.vars.len() - 1
                    }
                };
                Ok(Term::Var(index))
            }
            Some(c) => Err(format!("unexpected {c:?}: expected a variable or '('")),
            None => Err("unexpected end: expected a variable or '('".to_owned()),
        }
    }
}

/// A partially filled Cayley table; `None` is an unassigned cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub n: usize,
    pub cells: Vec<Option<u8>>,
}

impl Table {
    pub fn get(&self, a: u8, b: u8) -> Option<u8> {
        self.cells[usize::from(a) * self.n + usize::from(b)]
    }

    fn eval(&self, term: &Term, assignment: &[u8]) -> Option<u8> {
        match term {
            Term::Var(i) => Some(assignment[*i]),
            Term::Op(l, r) => {
                let l = self.eval(l, assignment)?;
                let r = self.eval(r, assignment)?;
                self.get(l, r)
            }
        }
    }
}

/// Calls `f` on every assignment of `k` variables over `0..n`, in
/// lexicographic order, until it returns `Some`.
fn first_assignment<T>(n: usize, k: usize, mut f: impl FnMut(&[u8]) -> Option<T>) -> Option<T> {
    let mut assignment = vec![0u8; k];
    loop {
        if let Some(found) = f(&assignment) {
            return Some(found);
        }
        let mut i = k;
        loop {
            if i == 0 {
                return None;
            }
            i -= 1;
            if usize::from(assignment[i]) + 1 < n {
                assignment[i] += 1;
                break;
            }
            assignment[i] = 0;
        }
    }
}

/// Whether the law is already violated by the assigned cells (the partial
/// table cannot be completed to a model of it).
pub fn violated_by_partial(law: &Law, table: &Table) -> bool {
    let n = table.n;
    match law {
        Law::Equation { vars, lhs, rhs } => {
            first_assignment(n, vars.len(), |a| match (table.eval(lhs, a), table.eval(rhs, a)) {
                (Some(l), Some(r)) if l != r => Some(()),
                _ => None,
            })
            .is_some()
        }
        Law::Quasigroup => repeated_entry(table).is_some(),
        Law::HasIdentity => (0..n as u8).all(|e| identity_failure(table, e).is_some()),
    }
}

/// A violation of a law by a complete table, as JSON for the witness.
pub fn violation(law: &Law, table: &Table) -> Option<serde_json::Value> {
    let n = table.n;
    match law {
        Law::Equation { vars, .. } => first_assignment(n, vars.len(), |a| violation_at(law, table, a)),
        Law::Quasigroup => repeated_entry(table).map(|(line, index, first, second, value)| {
            serde_json::json!({"kind": "repeated_entry", "line": line, "index": index,
                               "positions": [first, second], "value": value})
        }),
        Law::HasIdentity => {
            let failures: Option<Vec<serde_json::Value>> =
                (0..n as u8).map(|e| identity_failure(table, e).map(|x| serde_json::json!({"e": e, "x": x}))).collect();
            failures.map(|f| serde_json::json!({"kind": "no_identity", "failures": f}))
        }
    }
}

/// The violation of an equation at one assignment of its variables, if it
/// fails there (as JSON for the witness); `None` for a named law.
pub fn violation_at(law: &Law, table: &Table, a: &[u8]) -> Option<serde_json::Value> {
    let Law::Equation { vars, lhs, rhs } = law else { return None };
    let (l, r) = (table.eval(lhs, a)?, table.eval(rhs, a)?);
    (l != r).then(|| {
        let assignment: BTreeMap<&str, u8> = vars.iter().map(String::as_str).zip(a.iter().copied()).collect();
        serde_json::json!({"kind": "equation", "assignment": assignment, "lhs": l, "rhs": r})
    })
}

/// The first `x` with `e*x != x` or `x*e != x` among assigned cells.
fn identity_failure(table: &Table, e: u8) -> Option<u8> {
    (0..table.n as u8).find(|&x| table.get(e, x).is_some_and(|v| v != x) || table.get(x, e).is_some_and(|v| v != x))
}

/// A row or column holding the same value twice: (line, index, pos1, pos2, value).
fn repeated_entry(table: &Table) -> Option<(&'static str, u8, u8, u8, u8)> {
    let n = table.n as u8;
    for (line, cell) in [("row", false), ("column", true)] {
        for i in 0..n {
            let at = |j: u8| if cell { table.get(j, i) } else { table.get(i, j) };
            for p in 0..n {
                for q in p + 1..n {
                    if let (Some(a), Some(b)) = (at(p), at(q))
                        && a == b
                    {
                        return Some((line, i, p, q, a));
                    }
                }
            }
        }
    }
    None
}
