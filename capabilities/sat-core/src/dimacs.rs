//! DIMACS CNF parsing with errors that name the line and the token.

/// Bounds stated in the descriptor.
pub const MAX_VARIABLES: u32 = 100_000;
/// Most clauses.
pub const MAX_CLAUSES: usize = 1_000_000;

/// A parsed formula.
pub struct Cnf {
    pub variables: u32,
    pub clauses: Vec<Vec<i32>>,
}

/// Parse DIMACS CNF. A `%` line (as in the SATLIB files) ends the formula.
pub fn parse(text: &str) -> Result<Cnf, String> {
    let mut header: Option<(u32, usize)> = None;
    let mut clauses = Vec::new();
    let mut current = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('c') {
            continue;
        }
        if trimmed.starts_with('%') {
            break;
        }
        if trimmed.starts_with('p') {
            if header.is_some() {
                return Err(format!("line {number}: a second header"));
            }
            let fields: Vec<&str> = trimmed.split_ascii_whitespace().collect();
            let [_, kind, vars, count] = fields[..] else {
                return Err(format!("line {number}: the header must be \"p cnf VARIABLES CLAUSES\""));
            };
            if kind != "cnf" {
                return Err(format!("line {number}, token {kind:?}: only cnf is supported"));
            }
            let vars: u32 = vars.parse().map_err(|_| format!("line {number}, token {vars:?}: not a variable count"))?;
            let count: usize =
                count.parse().map_err(|_| format!("line {number}, token {count:?}: not a clause count"))?;
            if vars > MAX_VARIABLES || count > MAX_CLAUSES {
                return Err(format!("line {number}: at most {MAX_VARIABLES} variables and {MAX_CLAUSES} clauses"));
            }
            header = Some((vars, count));
            continue;
        }
        let Some((vars, _)) = header else {
            return Err(format!("line {number}: a clause before the \"p cnf\" header"));
        };
        for token in trimmed.split_ascii_whitespace() {
            let lit: i64 =
                token.parse().map_err(|_| format!("line {number}, token {token:?}: not an integer literal"))?;
            if lit == 0 {
                clauses.push(std::mem::take(&mut current));
                if clauses.len() > MAX_CLAUSES {
                    return Err(format!("line {number}: more than {MAX_CLAUSES} clauses"));
                }
            } else if lit.unsigned_abs() > u64::from(vars) {
                return Err(format!("line {number}, token {token:?}: variable outside 1..={vars}"));
            } else {
                current.push(lit as i32);
            }
        }
    }
    let Some((variables, count)) = header else { return Err("no \"p cnf\" header".into()) };
    if !current.is_empty() {
        return Err("the last clause is not terminated by 0".into());
    }
    if clauses.len() != count {
        return Err(format!("the header declares {count} clauses but {} were given", clauses.len()));
    }
    Ok(Cnf { variables, clauses })
}

/// Check LRAT syntax: every line is `id lits 0 hints 0` or `id d ids 0`.
/// Returns (lemmas, deletions). Soundness is the checker's business.
pub fn lrat_syntax(text: &str) -> Result<(u64, u64), String> {
    let (mut lemmas, mut deletions) = (0, 0);
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('c') {
            continue;
        }
        let tokens: Vec<&str> = trimmed.split_ascii_whitespace().collect();
        let deletion = tokens.get(1) == Some(&"d");
        let numeric = if deletion { &tokens[2..] } else { &tokens[1..] };
        tokens[0]
            .parse::<u64>()
            .ok()
            .filter(|id| *id > 0)
            .ok_or_else(|| format!("line {number}, token {:?}: expected a positive clause id", tokens[0]))?;
        for token in numeric {
            token.parse::<i64>().map_err(|_| format!("line {number}, token {token:?}: not an integer"))?;
        }
        let zeros = numeric.iter().filter(|t| **t == "0").count();
        let expected = if deletion { 1 } else { 2 };
        if zeros != expected || numeric.last() != Some(&"0") {
            return Err(format!("line {number}: expected {expected} terminating 0s"));
        }
        if deletion { deletions += 1 } else { lemmas += 1 }
    }
    Ok((lemmas, deletions))
}
