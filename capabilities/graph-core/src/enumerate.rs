//! Isomorphism classes of small graphs: canonical labelling by partition
//! refinement and individualization (with twin pruning), and generation by
//! vertex or leaf extension with duplicates removed by canonical code.
//!
//! Graphs are adjacency bit masks (`u16`, order ≤ 16); a canonical code is the
//! upper triangle of the canonically relabelled adjacency matrix, row by row
//! (first row most significant), packed into a `u128`.

use std::collections::HashSet;

/// Adjacency masks, one per vertex.
pub type Adjacency = Vec<u16>;

/// Which family of graphs to enumerate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    All,
    Connected,
    Trees,
}

/// The canonical code of a graph: the largest upper-triangle code over every
/// labelling the refinement search reaches. Isomorphic graphs get equal codes.
pub fn canonical_code(adjacency: &[u16]) -> u128 {
    let n = adjacency.len();
    if n <= 1 {
        return 0;
    }
    let mut twins = [0u16; 16];
    for u in 0..n {
        for v in u + 1..n {
            let both = !((1u16 << u) | (1u16 << v));
            if adjacency[u] & both == adjacency[v] & both {
                twins[u] |= 1 << v;
                twins[v] |= 1 << u;
            }
        }
    }
    let mut partition = Partition { elements: [0; 16], ends: 1 << (n - 1), n };
    for (i, slot) in partition.elements[..n].iter_mut().enumerate() {
        *slot = i as u8;
    }
    partition.refine(adjacency, 1);
    let mut search = Canon { adjacency, twins, best: None };
    search.descend(partition);
    search.best.unwrap_or(0)
}

/// An ordered partition of the vertices: cells are consecutive runs of
/// `elements`; bit `i` of `ends` marks position `i` as the last of its cell.
#[derive(Clone, Copy)]
struct Partition {
    elements: [u8; 16],
    ends: u16,
    n: usize,
}

impl Partition {
    /// The first cell with more than one vertex, as a position range.
    fn first_open_cell(&self) -> Option<(usize, usize)> {
        let mut start = 0;
        while start < self.n {
            let end = start + (self.ends >> start).trailing_zeros() as usize;
            if end > start {
                return Some((start, end));
            }
            start = end + 1;
        }
        None
    }

    /// The last position of the cell starting at `start`.
    fn end_of(&self, start: usize) -> usize {
        start + (self.ends >> start).trailing_zeros() as usize
    }

    /// Split cells by neighbour counts into splitter cells until the partition
    /// is equitable. `queue` marks the starts of the cells to split by; every
    /// piece of a split cell joins it. Pieces are ordered by count and the
    /// queue is served by position, so the result is labelling-invariant.
    fn refine(&mut self, adjacency: &[u16], mut queue: u16) {
        let discrete = ((1u32 << self.n) - 1) as u16;
        while queue != 0 && self.ends != discrete {
            let s = queue.trailing_zeros() as usize;
            queue &= queue - 1;
            let mask: u16 = self.elements[s..=self.end_of(s)].iter().fold(0, |m, &v| m | 1 << v);
            let mut c = 0;
            while c < self.n {
                let c_end = self.end_of(c);
                if c_end > c {
                    queue |= self.split(adjacency, mask, c, c_end);
                }
                c = c_end + 1;
            }
        }
    }

    /// Split the cell at `start..=end` by neighbour count into `mask`; the
    /// starts of its pieces when it split, else nothing.
    fn split(&mut self, adjacency: &[u16], mask: u16, start: usize, end: usize) -> u16 {
        let mut keys = [0u32; 16];
        let mut uniform = true;
        for i in start..=end {
            keys[i] = (adjacency[self.elements[i] as usize] & mask).count_ones();
            uniform &= keys[i] == keys[start];
        }
        if uniform {
            return 0;
        }
        // Insertion sort by count (cells are short).
        for i in start + 1..=end {
            let mut j = i;
            while j > start && keys[j - 1] > keys[j] {
                keys.swap(j - 1, j);
                self.elements.swap(j - 1, j);
                j -= 1;
            }
        }
        let mut starts = 1 << start;
        for i in start..end {
            if keys[i] != keys[i + 1] {
                self.ends |= 1 << i;
                starts |= 1 << (i + 1);
            }
        }
        starts
    }
}

struct Canon<'a> {
    adjacency: &'a [u16],
    twins: [u16; 16],
    best: Option<u128>,
}

impl Canon<'_> {
    fn descend(&mut self, partition: Partition) {
        let Some((start, end)) = partition.first_open_cell() else {
            let code = code_of(self.adjacency, &partition.elements[..partition.n]);
            if self.best.is_none_or(|best| code > best) {
                self.best = Some(code);
            }
            return;
        };
        let mut tried = 0u16;
        for i in start..=end {
            let v = partition.elements[i];
            // Swapping twins is an automorphism fixing this partition: same subtree.
            if self.twins[v as usize] & tried != 0 {
                continue;
            }
            tried |= 1 << v;
            let mut next = partition;
            next.elements.swap(start, i);
            next.ends |= 1 << start;
            // The rest of the cell needs no splitting turn of its own: the
            // partition was equitable, so counts into it follow from counts into v.
            next.refine(self.adjacency, 1 << start);
            self.descend(next);
        }
    }
}

/// The code of the graph relabelled so that `order[i]` becomes `i`: for each
/// row i in turn, the bits of columns j > i (column i + 1 least significant).
fn code_of(adjacency: &[u16], order: &[u8]) -> u128 {
    let n = order.len();
    let mut position = [0u8; 16];
    for (i, &v) in order.iter().enumerate() {
        position[v as usize] = i as u8;
    }
    let mut code = 0u128;
    for (i, &u) in order.iter().enumerate() {
        let mut row = 0u16;
        let mut rest = adjacency[u as usize];
        while rest != 0 {
            row |= 1 << position[rest.trailing_zeros() as usize];
            rest &= rest - 1;
        }
        let width = n - 1 - i;
        if width > 0 {
            code = code << width | u128::from(row >> (i + 1));
        }
    }
    code
}

/// The adjacency masks a canonical code stands for.
pub fn decode(n: usize, code: u128) -> Adjacency {
    let mut adjacency = vec![0u16; n];
    let mut shift = (n * n.saturating_sub(1) / 2) as u32;
    for i in 0..n {
        let width = (n - 1 - i) as u32;
        if width == 0 {
            break;
        }
        shift -= width;
        let row = (code >> shift) as u16 & ((1u32 << width) - 1) as u16;
        let mut rest = row;
        while rest != 0 {
            let j = i + 1 + rest.trailing_zeros() as usize;
            adjacency[i] |= 1 << j;
            adjacency[j] |= 1 << i;
            rest &= rest - 1;
        }
    }
    adjacency
}

/// Whether the graph is connected (the empty graph on no vertices counts as connected).
pub fn is_connected(adjacency: &[u16]) -> bool {
    let n = adjacency.len();
    if n == 0 {
        return true;
    }
    let all = ((1u32 << n) - 1) as u16;
    let mut reached = 1u16;
    let mut frontier = 1u16;
    while frontier != 0 {
        let v = frontier.trailing_zeros() as usize;
        frontier &= frontier - 1;
        let new = adjacency[v] & !reached;
        reached |= new;
        frontier |= new;
    }
    reached == all
}

/// Canonical codes of every graph of `family` on `n ≥ 1` vertices, ascending, and the
/// number of candidate extensions canonicalized on the way.
///
/// Every graph on k + 1 vertices is a graph on k vertices plus a vertex of
/// minimum degree (for trees: plus a leaf), so extending each class on k
/// vertices by every neighbourhood that keeps the new vertex of minimum degree
/// reaches every class; duplicates meet in a set of canonical codes.
pub fn enumerate(family: Family, n: usize) -> (Vec<u128>, u64) {
    let mut level: Vec<u128> = vec![0];
    let mut candidates = 0u64;
    for k in 1..n {
        let mut next: HashSet<u128, BuildCodeHasher> = HashSet::default();
        for &code in &level {
            let base = decode(k, code);
            let mut extend = |neighbours: u16| {
                let mut grown = [0u16; 16];
                for (v, (row, &old)) in grown.iter_mut().zip(&base).enumerate() {
                    *row = old | (neighbours >> v & 1) << k;
                }
                grown[k] = neighbours;
                candidates += 1;
                next.insert(canonical_code(&grown[..=k]));
            };
            match family {
                Family::Trees => (0..k).for_each(|v| extend(1 << v)),
                Family::All | Family::Connected => {
                    for neighbours in (0..1u32 << k).map(|s| s as u16) {
                        let degree = neighbours.count_ones();
                        let minimum = (0..k)
                            .map(|v| base[v].count_ones() + u32::from(neighbours >> v & 1 == 1))
                            .min()
                            .unwrap_or(u32::MAX);
                        if degree <= minimum {
                            extend(neighbours);
                        }
                    }
                }
            }
        }
        level = next.into_iter().collect();
    }
    if family == Family::Connected {
        level.retain(|&code| is_connected(&decode(n, code)));
    }
    level.sort_unstable();
    (level, candidates)
}

/// Canonical codes are already well mixed; fold the halves and multiply.
#[derive(Default, Clone, Copy)]
struct BuildCodeHasher;

impl std::hash::BuildHasher for BuildCodeHasher {
    type Hasher = CodeHasher;
    fn build_hasher(&self) -> CodeHasher {
        CodeHasher(0)
    }
}

struct CodeHasher(u64);

impl std::hash::Hasher for CodeHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u128(&mut self, value: u128) {
        self.0 = ((value as u64) ^ (value >> 64) as u64 ^ self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 ^= self.0 >> 29;
    }
}

/// graph6 text of a graph of order at most 62.
pub fn graph6(adjacency: &[u16]) -> String {
    let n = adjacency.len();
    let mut out = String::with_capacity(1 + (n * n.saturating_sub(1) / 2).div_ceil(6));
    out.push((63 + n as u8) as char);
    let mut group = 0u8;
    let mut filled = 0;
    for (i, j) in (1..n).flat_map(|j| (0..j).map(move |i| (i, j))) {
        group = group << 1 | (adjacency[i] >> j & 1) as u8;
        filled += 1;
        if filled == 6 {
            out.push((63 + group) as char);
            group = 0;
            filled = 0;
        }
    }
    if filled > 0 {
        out.push((63 + (group << (6 - filled))) as char);
    }
    out
}
