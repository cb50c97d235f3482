//! The soundness harness of the enumeration checker.
//!
//! On at most 5 vertices every labelled graph is tried here: its class is
//! its least edge code over every relabelling, so the classes of each family
//! are known. The claim — "these graphs are every class of the family on n
//! vertices, each once" — is true exactly when the listed graphs parse, have
//! order n, belong to the family, fall in distinct classes and cover them
//! all. Classes:
//! - `valid`: one random labelling of each class, in a random order;
//! - `missing`: one class left out (and the count lowered to match);
//! - `duplicate`: a relabelled copy of a listed graph in place of another class;
//! - `non_member`: a graph outside the family (or of another order) in place of one;
//! - `count`: the count field disagreeing with the list;
//! - `malformed`: a graph6 string with a wrong length, byte or padding.
//!
//! The differential leg lists every class with nauty's `geng` (orders 1 to
//! 8), mutates the listing the same ways, and compares with nauty's
//! judgement: `labelg` canonical labels tell whether two graphs are
//! isomorphic, `geng`'s count how many classes there are.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use jacobian_soundness::{Budget, Reference, Rng, Tally, Verdict, scratch};

use crate::{Family, Judgement, judge};

/// Edge bit of the pair `(i, j)`, `i < j`, in graph6 column order.
fn bit(i: usize, j: usize) -> usize {
    j * (j - 1) / 2 + i
}

fn graph6(n: usize, edges: u64) -> String {
    let pairs = n * n.saturating_sub(1) / 2;
    let mut out = vec![63 + n as u8];
    for chunk in 0..pairs.div_ceil(6) {
        let mut value = 0u8;
        for k in 0..6 {
            let b = chunk * 6 + k;
            value = value << 1 | u8::from(b < pairs && edges >> b & 1 == 1);
        }
        out.push(63 + value);
    }
    String::from_utf8(out).unwrap()
}

fn relabel(n: usize, edges: u64, p: &[usize]) -> u64 {
    let mut out = 0;
    for j in 1..n {
        for i in 0..j {
            if edges >> bit(i, j) & 1 == 1 {
                let (a, b) = (p[i].min(p[j]), p[i].max(p[j]));
                out |= 1 << bit(a, b);
            }
        }
    }
    out
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    permutations(n - 1)
        .into_iter()
        .flat_map(|p| {
            (0..=p.len()).map(move |at| {
                let mut q = p.clone();
                q.insert(at, n - 1);
                q
            })
        })
        .collect()
}

fn member(n: usize, edges: u64, family: Family) -> bool {
    let connected = {
        let mut seen = 1u32;
        let mut frontier = vec![0usize];
        while let Some(v) = frontier.pop() {
            for u in 0..n {
                let e = if u == v { false } else { edges >> bit(u.min(v), u.max(v)) & 1 == 1 };
                if e && seen >> u & 1 == 0 {
                    seen |= 1 << u;
                    frontier.push(u);
                }
            }
        }
        n == 0 || seen.count_ones() as usize == n
    };
    match family {
        Family::All => true,
        Family::Connected => connected,
        Family::Trees => connected && edges.count_ones() as usize + 1 == n,
    }
}

/// Every class of `family` on `n` vertices: least code → its labelled members.
fn classes(n: usize, family: Family) -> BTreeMap<u64, Vec<u64>> {
    let perms = permutations(n);
    let mut out: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for edges in 0..1u64 << (n * n.saturating_sub(1) / 2) {
        if member(n, edges, family) {
            let key = perms.iter().map(|p| relabel(n, edges, p)).min().unwrap_or(0);
            out.entry(key).or_default().push(edges);
        }
    }
    out
}

struct Case {
    class: &'static str,
    family: Family,
    n: usize,
    count: usize,
    graphs: Vec<String>,
}

/// A listing of `n`-vertex `family` graphs from one labelled member of each
/// class (`members`), changed as its class says.
fn listing(rng: &mut Rng, n: usize, family: Family, members: &[Vec<u64>]) -> Case {
    let mut graphs: Vec<(usize, u64)> = members.iter().map(|m| (n, *rng.pick(m))).collect();
    for i in (1..graphs.len()).rev() {
        graphs.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let class = *rng.pick(&["valid", "valid", "missing", "duplicate", "non_member", "count", "malformed"]);
    let mut count_offset: i64 = 0;
    let mut malformed = None;
    let k = rng.below(graphs.len() as u64) as usize;
    match class {
        "missing" => {
            graphs.remove(k);
        }
        "duplicate" if graphs.len() >= 2 => {
            let (m, e) = graphs[(k + 1) % graphs.len()];
            let p = {
                let mut p: Vec<usize> = (0..m).collect();
                for i in (1..m).rev() {
                    p.swap(i, rng.below(i as u64 + 1) as usize);
                }
                p
            };
            graphs[k] = (m, relabel(m, e, &p));
        }
        "non_member" => {
            let pairs = n * n.saturating_sub(1) / 2;
            let other = if rng.chance(1, 3) {
                (n + 1, rng.below(1 << ((n + 1) * n / 2)))
            } else {
                (n, if pairs == 0 { 0 } else { rng.below(1 << pairs) })
            };
            graphs[k] = other;
        }
        "count" => count_offset = if rng.chance(1, 2) { 1 } else { -1 },
        "malformed" => {
            let text = graph6(n, graphs[k].1);
            malformed = Some((
                k,
                match rng.below(3) {
                    0 => format!("{text}?"),
                    1 => format!("{}~", &text[..text.len().saturating_sub(1)]),
                    _ => format!("{}{}", char::from(63 + n as u8 + 1), &text[1..]),
                },
            ));
        }
        _ => {}
    }
    let mut texts: Vec<String> = graphs.iter().map(|&(m, e)| graph6(m, e)).collect();
    if let Some((k, text)) = malformed {
        texts[k] = text;
    }
    let count = (texts.len() as i64 + count_offset).max(0) as usize;
    Case { class, family, n, count, graphs: texts }
}

/// The truth of a listing, from the labelled classes computed here.
fn truth(case: &Case, classes: &BTreeMap<u64, Vec<u64>>, key_of: &dyn Fn(&str) -> Option<(usize, u64)>) -> bool {
    if case.count != case.graphs.len() || case.graphs.len() != classes.len() {
        return false;
    }
    let mut keys = BTreeSet::new();
    for text in &case.graphs {
        let Some((m, edges)) = key_of(text) else { return false };
        if m != case.n || !member(m, edges, case.family) {
            return false;
        }
        let Some(key) = classes.iter().find(|(_, ms)| ms.contains(&edges)).map(|(k, _)| *k) else { return false };
        keys.insert(key);
    }
    keys.len() == classes.len()
}

/// A graph6 string read here: its order and edge bits, or `None` if it is not exactly one graph.
fn read(text: &str) -> Option<(usize, u64)> {
    let bytes = text.as_bytes();
    let n = usize::from(*bytes.first()?).checked_sub(63)?;
    if n > 10 {
        return None;
    }
    let pairs = n * n.saturating_sub(1) / 2;
    if bytes.len() != 1 + pairs.div_ceil(6) {
        return None;
    }
    let mut edges = 0u64;
    for (chunk, &byte) in bytes[1..].iter().enumerate() {
        let value = byte.checked_sub(63).filter(|v| *v < 64)?;
        for k in 0..6 {
            let b = chunk * 6 + k;
            let set = value >> (5 - k) & 1 == 1;
            if b >= pairs {
                if set {
                    return None;
                }
            } else if set {
                edges |= 1 << b;
            }
        }
    }
    Some((n, edges))
}

fn verdict(case: &Case) -> Verdict {
    Verdict::of(matches!(judge(case.family, case.n, case.count, &case.graphs), Judgement::Accepted { .. }))
}

fn describe(seed: u64, index: u64, case: &Case) -> String {
    format!(
        "seed {seed:#x} instance {index}: {} on {} vertices, count {}: {:?}",
        case.family.name(),
        case.n,
        case.count,
        case.graphs
    )
}

#[test]
fn enumeration_brute_force_no_incomplete_or_redundant_listing_is_accepted() {
    let budget = Budget::from_env(6_000, 1);
    let families = [Family::All, Family::Connected, Family::Trees];
    let all_classes: BTreeMap<(usize, &str), BTreeMap<u64, Vec<u64>>> =
        (1..=5).flat_map(|n| families.map(|f| ((n, f.name()), classes(n, f)))).collect();
    let mut tally = Tally::new("graph enumeration", "brute force");
    for index in budget.indices() {
        let mut rng = Rng::for_instance(budget.seed, index);
        let n = rng.range(1, 5) as usize;
        let family = *rng.pick(&families);
        let classes = &all_classes[&(n, family.name())];
        let members: Vec<Vec<u64>> = classes.values().cloned().collect();
        let case = listing(&mut rng, n, family, &members);
        let truth = truth(&case, classes, &read);
        let verdict = verdict(&case);
        tally.judge(case.class, truth, verdict, || describe(budget.seed, index, &case));
        assert!(
            !(truth && verdict == Verdict::Rejected),
            "a complete listing rejected: {}",
            describe(budget.seed, index, &case)
        );
    }
    tally.report();
    tally.assert_both_sides(budget.instances.min(6_000) / 10, budget.instances.min(6_000) / 10);
}

/// nauty's listings and canonical labels beside the checker, orders 1 to 8.
#[test]
fn enumeration_agrees_with_nauty() {
    let Some(geng) = Reference::find("nauty", "JACOBIAN_NAUTY_GENG", "nauty-geng") else { return };
    let labelg = geng.program.with_file_name("nauty-labelg");
    let budget = Budget::from_env(300, 20);
    let dir = scratch("enumeration");
    let limit = Duration::from_secs(120);
    let mut listings: BTreeMap<(usize, &str), Vec<String>> = BTreeMap::new();
    let mut tally = Tally::new("graph enumeration", "nauty");
    for index in budget.indices() {
        let mut rng = Rng::for_instance(budget.seed ^ 0x9a, index);
        let n = rng.range(1, 8) as usize;
        let family = *rng.pick(&[Family::All, Family::Connected, Family::Trees]);
        let listed = listings.entry((n, family.name())).or_insert_with(|| {
            let mut args: Vec<String> = vec!["-q".into()];
            if family != Family::All {
                args.push("-c".into());
            }
            args.push(n.to_string());
            if family == Family::Trees {
                args.push(format!("{}:{}", n - 1, n - 1));
            }
            let args: Vec<&Path> = args.iter().map(Path::new).collect();
            let run = geng.run(&args, limit);
            assert_eq!(run.code, Some(0), "geng: {}", run.output);
            run.output.lines().map(str::to_owned).collect()
        });
        // One labelled member per class: nauty's own listing, each graph relabelled at random.
        let members: Vec<Vec<u64>> = listed
            .iter()
            .map(|text| {
                let (m, e) = read(text).expect("geng's graph6");
                let mut p: Vec<usize> = (0..m).collect();
                for i in (1..m).rev() {
                    p.swap(i, rng.below(i as u64 + 1) as usize);
                }
                vec![relabel(m, e, &p)]
            })
            .collect();
        let case = listing(&mut rng, n, family, &members);
        // nauty's judgement: canonical labels of the listed graphs, all distinct, members, as many as geng lists.
        let file = dir.join("listed.g6");
        std::fs::write(&file, case.graphs.iter().map(|g| format!("{g}\n")).collect::<String>()).unwrap();
        let canonical = jacobian_soundness::run_program(&labelg, &[Path::new("-q"), &file], limit);
        let labels: Vec<&str> = canonical.output.lines().filter(|l| !l.starts_with('>')).collect();
        let parsed: Vec<Option<(usize, u64)>> = case.graphs.iter().map(|g| read(g)).collect();
        let members_ok = parsed.iter().all(|p| p.is_some_and(|(m, e)| m == n && member(m, e, family)));
        let distinct: BTreeSet<&str> = labels.iter().copied().collect();
        let theirs = canonical.code == Some(0)
            && members_ok
            && labels.len() == case.graphs.len()
            && distinct.len() == labels.len()
            && labels.len() == listed.len()
            && case.count == case.graphs.len();
        let describe = || format!("{}\nlabelg: {}", describe(budget.seed ^ 0x9a, index, &case), canonical.output);
        tally.judge(case.class, theirs, verdict(&case), describe);
        tally.compare(verdict(&case), Verdict::of(theirs), || None, describe);
    }
    tally.report();
    tally.assert_compared(budget.instances.min(300));
    let _ = std::fs::remove_dir_all(&dir);
}
