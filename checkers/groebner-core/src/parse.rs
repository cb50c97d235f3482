//! The polynomial syntax of a certificate, read by the checker's own tokenizer and parser.

use super::*;

/// Tokens of the polynomial syntax.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Num(BigInt),
    Var(usize),
    Op(char),
}

pub(super) fn tokenize(text: &str, vars: &[String]) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let digits: String = chars[start..i].iter().collect();
            out.push(Tok::Num(digits.parse().map_err(|_| format!("bad number {digits}"))?));
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            out.push(Tok::Var(vars.iter().position(|v| *v == name).ok_or_else(|| format!("unknown variable {name}"))?));
        } else if "+-*/^()".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else {
            return Err(format!("unexpected character {c:?}"));
        }
    }
    Ok(out)
}

/// The polynomial syntax, read by recursive descent; every string it
/// accepts reads the same under the usual conventions (powers bind
/// tighter than products, products than sums), and what the conventions
/// leave open is refused:
///
/// ```text
/// sum     := ['+' | '-'] product (('+' | '-') product)*
/// product := power ('*' power)*
/// power   := atom ['^' natural]
/// atom    := natural ['/' natural] | variable | '(' sum ')'
/// ```
///
/// A sign only starts a sum (`2*-3`, `1/-2*2` and `x - -1` are refused); a
/// fraction is a literal, never raised to a power without parentheses
/// (`2/3^2` is refused: 2/9 to some readers, 4/9 to others); a power of a
/// power needs parentheses; division is only of a natural by a non-zero
/// natural.
pub(super) struct Expr<'a> {
    toks: &'a [Tok],
    at: usize,
    width: usize,
}

impl Expr<'_> {
    fn constant(&self, c: BigRational) -> P {
        let mut p = P::new();
        if !c.is_zero() {
            p.insert(vec![0; self.width], c);
        }
        p
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn next_is(&mut self, op: char) -> bool {
        let found = self.peek() == Some(&Tok::Op(op));
        if found {
            self.at += 1;
        }
        found
    }

    fn sum(&mut self, depth: usize) -> Result<P, String> {
        if depth > 32 {
            return Err("parentheses nested deeper than 32".into());
        }
        let mut sign = if self.next_is('-') {
            -1
        } else {
            self.next_is('+');
            1
        };
        let mut total = P::new();
        loop {
            let term = self.product(depth)?;
            add_into(&mut total, &term, sign);
            sign = if self.next_is('+') {
                1
            } else if self.next_is('-') {
                -1
            } else {
                return Ok(total);
            };
        }
    }

    fn product(&mut self, depth: usize) -> Result<P, String> {
        let mut value = self.power(depth)?;
        while self.next_is('*') {
            let factor = self.power(depth)?;
            value = times(&value, &factor)?;
        }
        Ok(value)
    }

    fn power(&mut self, depth: usize) -> Result<P, String> {
        let (base, fraction) = self.atom(depth)?;
        if !self.next_is('^') {
            return Ok(base);
        }
        if fraction {
            return Err("a power of a fraction needs parentheses: (a/b)^k".into());
        }
        let Some(Tok::Num(n)) = self.peek().cloned() else {
            return Err("an exponent must be a natural number".into());
        };
        self.at += 1;
        let n: u32 = n.try_into().ok().filter(|n| *n <= MAX_EXPONENT).ok_or("exponent too large")?;
        if self.peek() == Some(&Tok::Op('^')) {
            return Err("a power of a power needs parentheses".into());
        }
        let mut acc = self.constant(BigRational::one());
        for _ in 0..n {
            acc = times(&acc, &base)?;
        }
        Ok(acc)
    }

    /// An atom, and whether it is a fraction literal.
    fn atom(&mut self, depth: usize) -> Result<(P, bool), String> {
        match self.peek().cloned() {
            Some(Tok::Op('(')) => {
                self.at += 1;
                let inner = self.sum(depth + 1)?;
                if !self.next_is(')') {
                    return Err("missing )".into());
                }
                Ok((inner, false))
            }
            Some(Tok::Num(n)) => {
                self.at += 1;
                if !self.next_is('/') {
                    return Ok((self.constant(BigRational::from_integer(n)), false));
                }
                let Some(Tok::Num(d)) = self.peek().cloned() else {
                    return Err("a fraction's denominator must be a natural number".into());
                };
                self.at += 1;
                if d.is_zero() {
                    return Err("division by zero".into());
                }
                Ok((self.constant(BigRational::new(n, d)), true))
            }
            Some(Tok::Var(v)) => {
                self.at += 1;
                let mut m = vec![0; self.width];
                m[v] = 1;
                Ok((P::from([(m, BigRational::one())]), false))
            }
            Some(Tok::Op(op)) => Err(format!("unexpected {op:?}: expected a number, a variable or '('")),
            None => Err("unexpected end: expected a number, a variable or '('".into()),
        }
    }
}

/// Parse `text` over `vars` by the syntax [`Expr`] describes.
pub fn poly(text: &str, vars: &[String]) -> Result<P, String> {
    let toks = tokenize(text, vars)?;
    let mut e = Expr { toks: &toks, at: 0, width: vars.len() };
    let p = e.sum(0)?;
    if e.at != toks.len() {
        return Err(format!("trailing tokens in {text:?}"));
    }
    Ok(p)
}
