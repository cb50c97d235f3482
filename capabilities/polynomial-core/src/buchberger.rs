//! Buchberger's algorithm as it is run today: pairs chosen by the sugar
//! strategy (least sugar, then least lcm), useless pairs dropped by the
//! Gebauer–Möller criteria, fraction-free top reduction by the shortest
//! reducer, and a trace of every polynomial added — the pair it came from
//! and the reducers used, in order — from which an independent checker can
//! rebuild each one from the generators.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

use crate::poly::Order;
use crate::sparse::{Mono, Pol, cancelling, combine, compare, content, words};

/// How a polynomial was added: the S-polynomial of `pair`, its leading term
/// then cancelled by each of `by` in turn (indices into the list that
/// starts with the generators).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub pair: (usize, usize),
    pub by: Vec<usize>,
}

/// Limits of one computation.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// S-polynomials reduced.
    pub max_pairs: u64,
    /// Terms touched by the arithmetic.
    pub max_work: u64,
}

/// Why a computation stopped without a basis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Pairs,
    Work,
    /// An exponent above 65,535.
    Degree,
}

/// What a run counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub pairs: u64,
    pub zero: u64,
    pub work: u64,
}

/// A Gröbner basis with the trace that produced it.
#[derive(Debug, Clone)]
pub struct Run {
    /// Every polynomial: the generators (zero ones included), then one per step.
    pub polys: Vec<Pol>,
    pub steps: Vec<Step>,
    /// Indices of a minimal Gröbner basis among `polys`.
    pub basis: Vec<usize>,
    pub counts: Counts,
}

/// What choosing a reducer looks at.
#[derive(Debug, Clone, Copy)]
struct Key {
    mask: u32,
    /// Bits of the largest coefficient, then length: the reducer that
    /// makes coefficients grow least (measured on cyclic-6: 20 s to 14 s
    /// natively against the shortest reducer).
    size: u64,
}

impl Key {
    fn of(p: &Pol) -> Key {
        if p.is_zero() {
            return Key { mask: 0, size: 0 };
        }
        let bits = p.terms.iter().map(|(_, c)| c.bits()).max().unwrap_or(0);
        Key { mask: p.lm().mask(), size: bits * 64 + p.len() as u64 }
    }
}

struct Pair {
    i: usize,
    j: usize,
    lcm: Mono,
    sugar: u32,
}

struct State {
    order: Order,
    polys: Vec<Pol>,
    sugar: Vec<u32>,
    /// Per polynomial: its leading monomial's mask, and its size as a reducer.
    keys: Vec<Key>,
    active: Vec<usize>,
    pairs: Vec<Pair>,
    steps: Vec<Step>,
    counts: Counts,
    budget: Budget,
}

/// A Gröbner basis of the ideal of `generators` (primitive, possibly zero).
pub fn groebner(order: Order, generators: Vec<Pol>, budget: Budget) -> Result<Run, (Stop, Counts)> {
    let n = generators.len();
    let mut state = State {
        order,
        sugar: generators.iter().map(Pol::degree).collect(),
        keys: generators.iter().map(Key::of).collect(),
        polys: generators,
        active: Vec::new(),
        pairs: Vec::new(),
        steps: Vec::new(),
        counts: Counts::default(),
        budget,
    };
    for j in 0..n {
        if !state.polys[j].is_zero() {
            state.update(j);
        }
    }
    while let Some(pair) = state.select() {
        state.counts.pairs += 1;
        if state.counts.pairs > budget.max_pairs {
            return Err((Stop::Pairs, state.counts));
        }
        let (h, by, sugar) = state.reduce(&pair).map_err(|stop| (stop, state.counts))?;
        if state.counts.work > budget.max_work {
            return Err((Stop::Work, state.counts));
        }
        if h.is_zero() {
            state.counts.zero += 1;
            continue;
        }
        let k = state.polys.len();
        state.keys.push(Key::of(&h));
        state.polys.push(h);
        state.sugar.push(sugar);
        state.steps.push(Step { pair: (pair.i, pair.j), by });
        state.update(k);
    }
    // Minimal: no leading monomial divisible by another's (the first of equals kept).
    let polys = &state.polys;
    let basis: Vec<usize> = state
        .active
        .iter()
        .copied()
        .filter(|&i| {
            !state
                .active
                .iter()
                .any(|&j| j != i && polys[j].lm().divides(polys[i].lm()) && (polys[j].lm() != polys[i].lm() || j < i))
        })
        .collect();
    Ok(Run { polys: state.polys, steps: state.steps, basis, counts: state.counts })
}

impl State {
    fn lm(&self, i: usize) -> &Mono {
        self.polys[i].lm()
    }

    fn pair(&self, i: usize, j: usize) -> Pair {
        let lcm = self.lm(i).lcm(self.lm(j));
        let sugar = (self.sugar[i] + lcm.deg - self.lm(i).deg).max(self.sugar[j] + lcm.deg - self.lm(j).deg);
        Pair { i, j, lcm, sugar }
    }

    /// The Gebauer–Möller update for the new element `h`.
    fn update(&mut self, h: usize) {
        let lm_h = *self.lm(h);
        // New pairs: keep (h, g) unless another new pair's lcm divides its lcm
        // (criterion M/F), then drop those with coprime leading monomials.
        let mut candidates: Vec<Pair> = self.active.iter().map(|&g| self.pair(h, g)).collect();
        let mut kept: Vec<Pair> = Vec::new();
        while let Some(p) = candidates.pop() {
            let coprime = lm_h.coprime(self.lm(p.j));
            if coprime || !candidates.iter().chain(&kept).any(|q| q.lcm.divides(&p.lcm)) {
                kept.push(p);
            }
        }
        kept.retain(|p| !lm_h.coprime(self.lm(p.j)));
        // Old pairs: drop (a, b) when lm(h) divides lcm(a, b) strictly on both sides (criterion B).
        let polys = &self.polys;
        self.pairs.retain(|p| {
            !(lm_h.divides(&p.lcm) && lm_h.lcm(polys[p.i].lm()) != p.lcm && lm_h.lcm(polys[p.j].lm()) != p.lcm)
        });
        self.pairs.extend(kept);
        self.active.retain(|&g| !lm_h.divides(polys[g].lm()));
        self.active.push(h);
    }

    /// The pair of least sugar, ties broken by the least lcm.
    fn select(&mut self) -> Option<Pair> {
        let order = self.order;
        // Degree orders: the lcm's degree first (the normal strategy), then sugar;
        // lex: sugar, the degree the pair would have were the ideal homogenized.
        let key = |p: &Pair| if order == Order::Lex { (p.sugar, 0) } else { (p.lcm.deg, p.sugar) };
        let best = (0..self.pairs.len()).min_by(|&a, &b| {
            let (p, q) = (&self.pairs[a], &self.pairs[b]);
            key(p).cmp(&key(q)).then_with(|| compare(order, &p.lcm, &q.lcm))
        })?;
        Some(self.pairs.swap_remove(best))
    }

    /// The S-polynomial of `pair`, fully reduced by the active set.
    fn reduce(&mut self, pair: &Pair) -> Result<(Pol, Vec<usize>, u32), Stop> {
        let (f, g) = (&self.polys[pair.i], &self.polys[pair.j]);
        let (a, b) = cancelling(f.lc(), g.lc(), &mut self.counts.work);
        let uf = f.lm().quotient_of(&pair.lcm);
        let ug = g.lm().quotient_of(&pair.lcm);
        // a·uf·f − b·ug·g: uf·f first, then the combination.
        let work = &mut self.counts.work;
        let fu =
            combine(self.order, &[], &BigInt::from(0), &BigInt::from(-1), &uf, &f.terms, work).ok_or(Stop::Degree)?;
        let s = combine(self.order, &fu, &a, &b, &ug, &g.terms, work).ok_or(Stop::Degree)?;
        let mut by = Vec::new();
        let (mut h, _) = reduce_terms(
            self.order,
            s,
            0,
            &self.active,
            &self.polys,
            &self.keys,
            work,
            self.budget.max_work,
            Some(&mut by),
        )?;
        if *work > self.budget.max_work {
            return Err(Stop::Work);
        }
        h.make_primitive(&mut self.counts.work);
        Ok((h, by, pair.sugar))
    }
}

/// Reduce every term of `p` from `start` on, largest first, by the
/// polynomials `reducers` index (the shortest whose leading monomial
/// divides the term), fraction free: `(scale·NF(p), scale)`, the content
/// divided out now and then. Each reducer used is pushed to `by`: it
/// cancelled the largest term its leading monomial divides.
#[allow(clippy::too_many_arguments)]
fn reduce_terms(
    order: Order,
    p: Vec<(Mono, BigInt)>,
    start: usize,
    reducers: &[usize],
    polys: &[Pol],
    keys: &[Key],
    work: &mut u64,
    max_work: u64,
    mut by: Option<&mut Vec<usize>>,
) -> Result<(Pol, BigRational), Stop> {
    let mut done: Vec<(Mono, BigInt)> = p[..start].to_vec();
    let mut scale = BigRational::one();
    let mut rest = p[start..].to_vec();
    let mut at = 0; // rest[..at] is irreducible and already in done
    let mut scaled = 0;
    while at < rest.len() {
        let (m, c) = &rest[at];
        let mask = m.mask();
        // Looking for a reducer costs too: a unit per 16 candidates.
        *work += 1 + reducers.len() as u64 / 16;
        let reducer = reducers
            .iter()
            .copied()
            .filter(|&r| keys[r].mask & !mask == 0 && polys[r].lm().divides(m))
            .min_by_key(|&r| (keys[r].size, r));
        let Some(r) = reducer else {
            done.push(rest[at].clone());
            at += 1;
            continue;
        };
        let g = &polys[r];
        let u = g.lm().quotient_of(m);
        let (a, b) = cancelling(c, g.lc(), work);
        if !a.is_one() {
            for (_, d) in &mut done {
                *d *= &a;
                *work += words(d) * words(&a);
            }
            // Only a normal form's caller (FGLM) reads the scale; Buchberger's steps do not keep it.
            if by.is_none() {
                *work += words(scale.numer()) * words(&a) + words(scale.denom());
                scale *= BigRational::from_integer(a.clone());
            }
            scaled += 1;
        }
        rest = combine(order, &rest[at..], &a, &b, &u, &g.terms, work).ok_or(Stop::Degree)?;
        at = 0;
        if *work > max_work {
            return Err(Stop::Work);
        }
        if let Some(by) = by.as_deref_mut() {
            by.push(r);
        }
        // Fraction-free steps multiply every coefficient: divide the content out every few.
        if scaled >= 4 {
            scaled = 0;
            let content = content(done.iter().chain(&rest).map(|(_, c)| c), work);
            if !content.is_one() && !content.is_zero() {
                for (_, c) in done.iter_mut().chain(rest.iter_mut()) {
                    *work += words(c) * words(&content);
                    *c = &*c / &content;
                }
                if by.is_none() {
                    *work += words(scale.numer()) * words(&content) + words(scale.denom());
                    scale /= BigRational::from_integer(content);
                }
            }
        }
    }
    Ok((Pol { terms: done }, scale))
}

/// The normal form of `p`'s terms from `start` on by `basis` (a Gröbner
/// basis in `order`), the terms before kept, times `scale`, the factor the
/// fraction-free reduction multiplied by: `(scale·NF(p), scale)`; `None`
/// when a monomial overflows or `work` passes `max_work`.
pub fn normal_form(
    order: Order,
    p: &Pol,
    start: usize,
    basis: &[Pol],
    work: &mut u64,
    max_work: u64,
) -> Result<(Pol, BigRational), Stop> {
    let keys: Vec<Key> = basis.iter().map(Key::of).collect();
    let all: Vec<usize> = (0..basis.len()).collect();
    reduce_terms(order, p.terms.clone(), start, &all, basis, &keys, work, max_work, None)
}
