//! The classic benchmark ideals, written out: cyclic-n and Katsura-n (shared
//! by the Gröbner tests and the `-- ideals` benchmark).

/// The generators and variables of cyclic-n or Katsura-n (`name` is
/// "cyclic" or "katsura").
pub fn classic(name: &str, n: usize) -> (Vec<String>, Vec<String>) {
    if name == "cyclic" {
        let vars: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
        let mut generators: Vec<String> = (1..n)
            .map(|d| {
                let products = (0..n).map(|s| (0..d).map(|k| vars[(s + k) % n].clone()).collect::<Vec<_>>().join("*"));
                products.collect::<Vec<_>>().join(" + ")
            })
            .collect();
        generators.push(format!("{} - 1", vars.join("*")));
        return (vars, generators);
    }
    // Katsura-n: u_0..u_n, Σ_l u_|l| u_|m-l| = u_m for m < n, and u_0 + 2 Σ u_i = 1.
    let vars: Vec<String> = (0..=n).map(|i| format!("u{i}")).collect();
    let u = |i: i64| (i.unsigned_abs() as usize <= n).then(|| vars[i.unsigned_abs() as usize].clone());
    let mut generators: Vec<String> = (0..n as i64)
        .map(|m| {
            let products: Vec<String> =
                (-(n as i64)..=n as i64).filter_map(|l| Some(format!("{}*{}", u(l)?, u(m - l)?))).collect();
            format!("{} - {}", products.join(" + "), vars[m as usize])
        })
        .collect();
    let doubled: Vec<String> = vars[1..].iter().map(|v| format!("2*{v}")).collect();
    generators.push(format!("{} + {} - 1", vars[0], doubled.join(" + ")));
    (vars, generators)
}
