#![no_main]
//! The SAT producer's DIMACS parser and LRAT syntax check, then the LRAT
//! and DRAT checking cores on whatever parses: input is `CNF text` `\n%%\n`
//! `proof` (read as LRAT, then as DRAT).

use jacobian_sat_core::dimacs;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (cnf, proof) = text.split_once("\n%%\n").unwrap_or((text, ""));
    let _ = dimacs::lrat_syntax(proof);
    if let Ok(parsed) = dimacs::parse(cnf) {
        assert!(parsed.clauses.iter().flatten().all(|l| *l != 0 && l.unsigned_abs() <= parsed.variables));
        let formula = jacobian_lrat_core::Formula { variables: parsed.variables, clauses: parsed.clauses };
        let _ = jacobian_lrat_core::check_lrat(&formula, proof);
        let _ = jacobian_lrat_core::check_drat(&formula, proof);
        let model: Vec<i32> = (1..=formula.variables.min(64) as i32).collect();
        let _ = jacobian_lrat_core::check_model(&formula, &model);
    }
});
