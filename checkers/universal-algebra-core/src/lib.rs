//! The independent check of a finite magma countermodel, as a plain
//! library. It shares no code with the search: laws are compiled to
//! postfix programs by its own shunting-yard parser, every hypothesis is
//! re-evaluated on the whole table, and the target's violation is
//! recomputed at the stated witness.

use serde_json::Value;

pub mod models;

/// Judge a countermodel: the table of order `order` must be a closed binary
/// operation, satisfy every hypothesis on every tuple, and violate the target
/// at `witness`. What was established, or why the countermodel fails.
pub fn judge(
    order: usize,
    table: &[Vec<u64>],
    hypotheses: &[String],
    target: &str,
    witness: &Value,
) -> Result<Vec<String>, String> {
    let n = order;
    if n == 0 || table.len() != n || table.iter().any(|row| row.len() != n) {
        return Err(format!("the table is not {n} by {n}"));
    }
    if let Some(v) = table.iter().flatten().find(|&&v| v >= n as u64) {
        return Err(format!("the table contains {v}, outside 0..{n}"));
    }
    let op = |a: usize, b: usize| table[a][b] as usize;
    let mut checked = vec![format!("the table is a closed binary operation on {{0,...,{}}}", n - 1)];
    for (i, text) in hypotheses.iter().enumerate() {
        let law = Property::parse(text).map_err(|e| format!("hypothesis {i} ({text}): {e}"))?;
        if let Some(failure) = law.first_failure(n, &op) {
            return Err(format!("hypothesis {text} fails: {failure}"));
        }
        checked.push(format!("hypothesis {text} holds on the whole table"));
    }
    let law = Property::parse(target).map_err(|e| format!("target: {e}"))?;
    let failure = law.failure_at(witness, n, &op)?;
    checked.push(format!("target {target} fails: {failure}"));
    Ok(checked)
}

/// A law compiled for checking.
pub enum Property {
    /// Postfix programs for both sides over variables `names`.
    Equation {
        names: Vec<String>,
        lhs: Vec<Token>,
        rhs: Vec<Token>,
    },
    Identity,
    Latin,
}

#[derive(Clone, Copy)]
pub enum Token {
    Var(usize),
    Apply,
}

impl Property {
    /// Compile a named law or an equation.
    pub fn parse(text: &str) -> Result<Property, String> {
        let equation = match text.trim() {
            "associative" => "x*(y*z) = (x*y)*z",
            "commutative" => "x*y = y*x",
            "idempotent" => "x*x = x",
            "left_alternative" => "x*(x*y) = (x*x)*y",
            "right_alternative" => "(y*x)*x = y*(x*x)",
            "flexible" => "x*(y*x) = (x*y)*x",
            "has_identity" => return Ok(Property::Identity),
            "quasigroup" => return Ok(Property::Latin),
            other => other,
        };
        let sides: Vec<&str> = equation.split('=').collect();
        let [left, right] = sides[..] else {
            return Err(format!("not a known law or an equation: {text:?}"));
        };
        let mut names = Vec::new();
        let lhs = postfix(left, &mut names)?;
        let rhs = postfix(right, &mut names)?;
        if names.len() > 6 {
            return Err(format!("{} variables exceed this checker's bound of 6", names.len()));
        }
        Ok(Property::Equation { names, lhs, rhs })
    }

    /// Work units evaluating the law on a whole table of order `n` costs:
    /// one per term symbol per assignment (a pass over the table otherwise).
    pub fn evaluation_cost(&self, n: usize) -> u64 {
        match self {
            Property::Equation { names, lhs, rhs } => {
                (n as u64).saturating_pow(names.len() as u32).saturating_mul((lhs.len() + rhs.len()) as u64)
            }
            Property::Identity | Property::Latin => 2 * (n * n) as u64,
        }
    }

    /// Searches the whole table for a failure of the law.
    pub fn first_failure(&self, n: usize, op: &impl Fn(usize, usize) -> usize) -> Option<String> {
        match self {
            Property::Equation { names, lhs, rhs } => {
                // Every assignment in turn, as an odometer: nothing to
                // overflow, however large the order or many the variables.
                if n == 0 {
                    return None;
                }
                let mut values = vec![0usize; names.len()];
                loop {
                    let (l, r) = (run(lhs, &values, op), run(rhs, &values, op));
                    if l != r {
                        return Some(format!("at {} the sides are {l} and {r}", show(names, &values)));
                    }
                    // No digit left to advance: every assignment was evaluated, and none fails.
                    let k = values.iter().position(|&v| v + 1 < n)?;
                    values[k] += 1;
                    values[..k].iter_mut().for_each(|v| *v = 0);
                }
            }
            Property::Identity => {
                let is_identity = |e: usize| (0..n).all(|x| op(e, x) == x && op(x, e) == x);
                (!(0..n).any(is_identity)).then(|| "no element is a two-sided identity".to_owned())
            }
            Property::Latin => {
                for a in 0..n {
                    let mut row = vec![false; n];
                    let mut column = vec![false; n];
                    for x in 0..n {
                        if std::mem::replace(&mut row[op(a, x)], true) {
                            return Some(format!("row {a} repeats {}", op(a, x)));
                        }
                        if std::mem::replace(&mut column[op(x, a)], true) {
                            return Some(format!("column {a} repeats {}", op(x, a)));
                        }
                    }
                }
                None
            }
        }
    }

    /// Confirms the law fails at the stated witness.
    pub fn failure_at(&self, witness: &Value, n: usize, op: &impl Fn(usize, usize) -> usize) -> Result<String, String> {
        match self {
            Property::Equation { names, lhs, rhs } => {
                let assignment =
                    witness.get("assignment").and_then(Value::as_object).ok_or("the witness has no assignment")?;
                let values = names
                    .iter()
                    .map(|name| {
                        assignment
                            .get(name)
                            .and_then(Value::as_u64)
                            .map(|v| v as usize)
                            .filter(|&v| v < n)
                            .ok_or_else(|| format!("the witness gives no value in 0..{n} for {name}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let (l, r) = (run(lhs, &values, op), run(rhs, &values, op));
                if l == r {
                    return Err(format!(
                        "the target holds at the witness {} (both sides are {l})",
                        show(names, &values)
                    ));
                }
                Ok(format!("at {} the sides are {l} and {r}", show(names, &values)))
            }
            Property::Identity | Property::Latin => {
                self.first_failure(n, op).ok_or_else(|| "the target holds on the whole table".to_owned())
            }
        }
    }
}

fn show(names: &[String], values: &[usize]) -> String {
    let parts: Vec<String> = names.iter().zip(values).map(|(n, v)| format!("{n}={v}")).collect();
    parts.join(", ")
}

/// Shunting-yard: infix term over `*` (left-associative) and parentheses to postfix.
fn postfix(text: &str, names: &mut Vec<String>) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut stack: Vec<char> = Vec::new();
    let mut expect_operand = true;
    // Blanks separate tokens and are otherwise ignored: `x y` is two operands, never one name `xy`.
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => {}
            'a'..='z' if expect_operand => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                let index = names.iter().position(|n| *n == name).unwrap_or_else(|| {
                    names.push(name);
                    names.len() - 1
                });
                out.push(Token::Var(index));
                expect_operand = false;
                continue;
            }
            '(' if expect_operand => stack.push('('),
            '*' if !expect_operand => {
                while stack.last() == Some(&'*') {
                    stack.pop();
                    out.push(Token::Apply);
                }
                stack.push('*');
                expect_operand = true;
            }
            ')' if !expect_operand => loop {
                match stack.pop() {
                    Some('*') => out.push(Token::Apply),
                    Some(_) => break,
                    None => return Err("unbalanced ')'".into()),
                }
            },
            other => return Err(format!("unexpected {other:?}")),
        }
        i += 1;
    }
    if expect_operand {
        return Err("incomplete term".into());
    }
    while let Some(top) = stack.pop() {
        match top {
            '*' => out.push(Token::Apply),
            _ => return Err("unbalanced '('".into()),
        }
    }
    Ok(out)
}

fn run(program: &[Token], values: &[usize], op: &impl Fn(usize, usize) -> usize) -> usize {
    let mut stack = Vec::with_capacity(program.len());
    for token in program {
        match *token {
            Token::Var(i) => stack.push(values[i]),
            Token::Apply => {
                let b = stack.pop().unwrap_or(0);
                let a = stack.pop().unwrap_or(0);
                stack.push(op(a, b));
            }
        }
    }
    stack.pop().unwrap_or(0)
}

#[cfg(test)]
mod soundness;
#[cfg(test)]
mod tests;
