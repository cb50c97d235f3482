//! The declared propositional syntax (`jacobian-propositional/1`): atoms,
//! true/false, ¬ ∧ ∨ → ↔ with their ASCII spellings, and parentheses.
//! Precedence: ↔ (non-associative) < → (right-associative) < ∨ < ∧ < ¬. An
//! unparenthesized chain of one associative operator is one n-ary node, so
//! grouping is preserved: `p ∧ q ∧ r` has three conjuncts, `(p ∧ q) ∧ r` two.
//! Errors name the character position.

use serde::{Deserialize, Serialize};

/// The syntax's name, recorded in every structure.
pub const SYNTAX: &str = "jacobian-propositional/1";
/// What every refusal adds: what the syntax does not cover.
pub const OUTSIDE: &str = "raw natural language and printed Lean expressions are outside this contract; write the \
claim in the propositional syntax (atoms, ¬ ∧ ∨ → ↔, parentheses)";

/// A node of the structure. Spans are character offsets into the source.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Node {
    /// ATOM, TRUE, FALSE, NOT, AND, OR, IMPLIES or IFF.
    pub kind: String,
    /// The atom's name (atoms only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `[start, end)` in characters of the source, parentheses included when `parenthesized`.
    pub span: [usize; 2],
    /// Whether the source writes this node in parentheses.
    pub parenthesized: bool,
    /// Operands in source order (an unparenthesized chain of ∧ or ∨ is one node).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Node>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Atom(String),
    Const(bool),
    Not,
    And,
    Or,
    Implies,
    Iff,
    Open,
    Close,
}

fn tokenize(chars: &[char]) -> Result<Vec<(Tok, usize, usize)>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let rest: String = chars[i..].iter().take(3).collect();
        let (tok, len) = if c.is_whitespace() {
            i += 1;
            continue;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_' || chars[j] == '\'') {
                j += 1;
            }
            let word: String = chars[start..j].iter().collect();
            let tok = match word.as_str() {
                "not" => Tok::Not,
                "and" => Tok::And,
                "or" => Tok::Or,
                "implies" => Tok::Implies,
                "iff" => Tok::Iff,
                "true" => Tok::Const(true),
                "false" => Tok::Const(false),
                _ => Tok::Atom(word),
            };
            (tok, j - start)
        } else if rest.starts_with("<->") {
            (Tok::Iff, 3)
        } else if rest.starts_with("->") {
            (Tok::Implies, 2)
        } else {
            let tok = match c {
                '¬' | '~' | '!' => Tok::Not,
                '∧' | '&' => Tok::And,
                '∨' | '|' => Tok::Or,
                '→' => Tok::Implies,
                '↔' => Tok::Iff,
                '⊤' => Tok::Const(true),
                '⊥' => Tok::Const(false),
                '(' => Tok::Open,
                ')' => Tok::Close,
                other => return Err(format!("position {i}: unexpected {other:?}; {OUTSIDE}")),
            };
            (tok, 1)
        };
        out.push((tok, i, i + len));
        i += len;
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, usize, usize)>,
    at: usize,
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.0)
    }

    fn error(&self, what: &str) -> String {
        match self.toks.get(self.at) {
            Some((tok, start, _)) => format!("position {start}: {what}, found {tok:?}; {OUTSIDE}"),
            None => format!("position {}: {what} at the end; {OUTSIDE}", self.end),
        }
    }

    /// iff (non-associative) < implies (right) < or < and < not < atom.
    fn iff(&mut self, depth: usize) -> Result<Node, String> {
        let left = self.implies(depth)?;
        if self.peek() == Some(&Tok::Iff) {
            self.at += 1;
            let right = self.implies(depth)?;
            return Ok(binary("IFF", left, right));
        }
        Ok(left)
    }

    fn implies(&mut self, depth: usize) -> Result<Node, String> {
        let left = self.chain(depth, Tok::Or)?;
        if self.peek() == Some(&Tok::Implies) {
            self.at += 1;
            let right = self.implies(depth)?;
            return Ok(binary("IMPLIES", left, right));
        }
        Ok(left)
    }

    /// A chain of one associative operator without parentheses is one n-ary node.
    fn chain(&mut self, depth: usize, op: Tok) -> Result<Node, String> {
        let next = |p: &mut Parser| if op == Tok::Or { p.chain(depth, Tok::And) } else { p.unary(depth) };
        let first = next(self)?;
        let mut children = vec![first];
        while self.peek() == Some(&op) {
            self.at += 1;
            children.push(next(self)?);
        }
        if children.len() == 1 {
            return Ok(children.swap_remove(0));
        }
        let span = [children[0].span[0], children[children.len() - 1].span[1]];
        Ok(Node {
            kind: if op == Tok::Or { "OR" } else { "AND" }.into(),
            name: None,
            span,
            parenthesized: false,
            children,
        })
    }

    fn unary(&mut self, depth: usize) -> Result<Node, String> {
        if depth > 64 {
            return Err(self.error("nesting deeper than 64"));
        }
        let Some((tok, start, end)) = self.toks.get(self.at).cloned() else {
            return Err(self.error("expected a formula"));
        };
        self.at += 1;
        match tok {
            Tok::Not => {
                let inner = self.unary(depth + 1)?;
                Ok(Node {
                    kind: "NOT".into(),
                    name: None,
                    span: [start, inner.span[1]],
                    parenthesized: false,
                    children: vec![inner],
                })
            }
            Tok::Atom(name) => {
                if matches!(self.peek(), Some(Tok::Atom(_))) {
                    return Err(self.error("two atoms in a row (is this prose?)"));
                }
                Ok(Node {
                    kind: "ATOM".into(),
                    name: Some(name),
                    span: [start, end],
                    parenthesized: false,
                    children: Vec::new(),
                })
            }
            Tok::Const(value) => Ok(Node {
                kind: if value { "TRUE" } else { "FALSE" }.into(),
                name: None,
                span: [start, end],
                parenthesized: false,
                children: Vec::new(),
            }),
            Tok::Open => {
                let mut inner = self.iff(depth + 1)?;
                match self.toks.get(self.at).cloned() {
                    Some((Tok::Close, _, close_end)) => {
                        self.at += 1;
                        inner.span = [start, close_end];
                        inner.parenthesized = true;
                        Ok(inner)
                    }
                    _ => Err(self.error("expected ')'")),
                }
            }
            _ => {
                self.at -= 1;
                Err(self.error("expected an atom, ¬ or '('"))
            }
        }
    }
}

/// A two-child operator node spanning both operands.
fn binary(kind: &str, left: Node, right: Node) -> Node {
    Node {
        kind: kind.into(),
        name: None,
        span: [left.span[0], right.span[1]],
        parenthesized: false,
        children: vec![left, right],
    }
}

/// Parse a formula of the declared syntax.
pub fn parse(source: &str) -> Result<Node, String> {
    let chars: Vec<char> = source.chars().collect();
    let toks = tokenize(&chars)?;
    let mut parser = Parser { toks, at: 0, end: chars.len() };
    let root = parser.iff(0)?;
    if parser.at != parser.toks.len() {
        return Err(parser.error("unexpected token after a complete formula"));
    }
    Ok(root)
}

pub fn slice(source: &str, span: [usize; 2]) -> String {
    source.chars().skip(span[0]).take(span[1] - span[0]).collect()
}

/// Re-base a subtree so that its source is `slice(source, node.span)`.
pub fn rebase(node: &Node, offset: usize) -> Node {
    Node {
        kind: node.kind.clone(),
        name: node.name.clone(),
        span: [node.span[0] - offset, node.span[1] - offset],
        parenthesized: node.parenthesized,
        children: node.children.iter().map(|c| rebase(c, offset)).collect(),
    }
}

/// The atoms of a structure, in order of first appearance.
pub fn collect_atoms(node: &Node, out: &mut Vec<String>) {
    if let Some(name) = &node.name
        && !out.contains(name)
    {
        out.push(name.clone());
    }
    for child in &node.children {
        collect_atoms(child, out);
    }
}
