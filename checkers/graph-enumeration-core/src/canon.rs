//! This checker's own canonical form: colour refinement (each vertex's colour
//! and the multiset of its neighbours' colours, ranked, until stable), then
//! individualization of each vertex of the smallest ambiguous colour class,
//! keeping the smallest adjacency code in graph6 column order. Twins (vertices
//! with equal neighbourhoods apart from each other) are tried once per class.

/// A graph as an adjacency matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matrix {
    pub n: usize,
    pub adjacent: Vec<Vec<bool>>,
}

impl Matrix {
    /// Parse graph6 text of order at most 62.
    pub fn from_graph6(text: &str) -> Result<Matrix, String> {
        let bytes = text.as_bytes();
        let (&first, rest) = bytes.split_first().ok_or("empty graph6 text")?;
        if !(63..=125).contains(&first) {
            return Err("graph6 order byte out of range".into());
        }
        let n = (first - 63) as usize;
        let pairs = n * n.saturating_sub(1) / 2;
        if rest.len() != pairs.div_ceil(6) {
            return Err(format!("graph6 of order {n} needs {} data bytes, found {}", pairs.div_ceil(6), rest.len()));
        }
        let mut bits = Vec::with_capacity(rest.len() * 6);
        for &byte in rest {
            if !(63..=126).contains(&byte) {
                return Err("graph6 data byte out of range".into());
            }
            let value = byte - 63;
            bits.extend((0..6).rev().map(|b| value >> b & 1 == 1));
        }
        if bits[pairs..].iter().any(|&b| b) {
            return Err("graph6 padding bits are not zero".into());
        }
        let mut adjacent = vec![vec![false; n]; n];
        let pairs = (1..n).flat_map(|j| (0..j).map(move |i| (i, j)));
        for ((i, j), bit) in pairs.zip(bits) {
            adjacent[i][j] = bit;
            adjacent[j][i] = bit;
        }
        Ok(Matrix { n, adjacent })
    }

    pub fn edges(&self) -> usize {
        (0..self.n).map(|i| (i + 1..self.n).filter(|&j| self.adjacent[i][j]).count()).sum()
    }

    pub fn connected(&self) -> bool {
        if self.n == 0 {
            return true;
        }
        let mut seen = vec![false; self.n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(v) = stack.pop() {
            for (u, &edge) in self.adjacent[v].iter().enumerate() {
                if edge && !seen[u] {
                    seen[u] = true;
                    stack.push(u);
                }
            }
        }
        seen.iter().all(|&s| s)
    }
}

/// The canonical form as its code bits (graph6 column order), smallest over the search.
pub fn canonical(graph: &Matrix) -> Vec<bool> {
    let n = graph.n;
    let twins: Vec<Vec<bool>> = (0..n)
        .map(|u| {
            (0..n)
                .map(|v| u != v && (0..n).all(|w| w == u || w == v || graph.adjacent[u][w] == graph.adjacent[v][w]))
                .collect()
        })
        .collect();
    let mut best = None;
    search(graph, &twins, vec![0; n], &mut best);
    best.unwrap_or_default()
}

fn stable_colouring(graph: &Matrix, mut colours: Vec<usize>) -> Vec<usize> {
    let mut classes = usize::MAX;
    loop {
        let signatures: Vec<(usize, Vec<usize>)> = (0..graph.n)
            .map(|v| {
                let mut around: Vec<usize> =
                    (0..graph.n).filter(|&u| graph.adjacent[v][u]).map(|u| colours[u]).collect();
                around.sort_unstable();
                (colours[v], around)
            })
            .collect();
        let mut ranked = signatures.clone();
        ranked.sort();
        ranked.dedup();
        colours = signatures.iter().map(|s| ranked.binary_search(s).expect("ranked holds every signature")).collect();
        if ranked.len() == classes {
            return colours;
        }
        classes = ranked.len();
    }
}

fn search(graph: &Matrix, twins: &[Vec<bool>], colours: Vec<usize>, best: &mut Option<Vec<bool>>) {
    let n = graph.n;
    let colours = stable_colouring(graph, colours);
    let mut sizes = vec![0usize; n];
    for &c in &colours {
        sizes[c] += 1;
    }
    let target = (0..n).filter(|&c| sizes[c] > 1).min_by_key(|&c| (sizes[c], c));
    let Some(target) = target else {
        // Discrete: colour is the new label.
        let mut vertex_at = vec![0; n];
        for (v, &c) in colours.iter().enumerate() {
            vertex_at[c] = v;
        }
        let code: Vec<bool> = (1..n)
            .flat_map(|j| (0..j).map(move |i| (i, j)))
            .map(|(i, j)| graph.adjacent[vertex_at[i]][vertex_at[j]])
            .collect();
        if best.as_ref().is_none_or(|b| code < *b) {
            *best = Some(code);
        }
        return;
    };
    let mut tried: Vec<usize> = Vec::new();
    for v in (0..n).filter(|&v| colours[v] == target) {
        if tried.iter().any(|&u| twins[u][v]) {
            continue;
        }
        tried.push(v);
        let next: Vec<usize> = (0..n).map(|u| 2 * colours[u] + usize::from(u != v)).collect();
        search(graph, twins, next, best);
    }
}
