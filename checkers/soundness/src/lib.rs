//! Test support for the checkers' soundness harnesses (a dev-dependency of
//! every `*-core` checker crate, never linked into a component).
//!
//! A harness makes claims whose truth it knows by brute force, gives the
//! checker certificates for them (valid, mutated, random and built to fool
//! a lazy checker), and keeps a [`Tally`]: a false claim accepted fails at
//! once, with its seed. A differential leg runs an outside [`Reference`]
//! on the same inputs and fails on every disagreement that is not one of
//! the harness's documented, closed list of known differences.
//!
//! How long a run is comes from the environment ([`Budget`]): a bounded
//! number of instances in the test suite, more (or a time limit) in
//! `scripts/soundness.sh`. Every run appends its counts to the file
//! `JACOBIAN_SOUNDNESS_REPORT` names, which the test command prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A seeded generator (SplitMix64): the same seed, the same instance.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The generator for instance `index` of a run seeded `seed`.
    pub fn for_instance(seed: u64, index: u64) -> Rng {
        let mut rng = Rng(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        rng.next_u64();
        rng
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high - low + 1)
    }

    /// True with probability `numerator / denominator`.
    pub fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// A random sign for `magnitude`.
    pub fn signed(&mut self, magnitude: i64) -> i64 {
        if self.chance(1, 2) { magnitude } else { -magnitude }
    }

    /// A DIMACS literal of a variable in `1..=variables`, either sign.
    pub fn literal(&mut self, variables: u32) -> i32 {
        let v = self.range(1, u64::from(variables)) as i64;
        self.signed(v) as i32
    }
}

/// How many instances a harness runs, and for how long at most.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Instances to run.
    pub instances: u64,
    /// Stop early at this time, if set.
    pub deadline: Option<Instant>,
    /// The run's seed.
    pub seed: u64,
}

impl Budget {
    /// `default` instances, unless `JACOBIAN_SOUNDNESS_INSTANCES` says how
    /// many (`scale` times fewer for a leg whose instance costs a process
    /// start) or `JACOBIAN_SOUNDNESS_SECONDS` bounds the run by time;
    /// `JACOBIAN_SOUNDNESS_SEED` changes every instance.
    pub fn from_env(default: u64, scale: u64) -> Budget {
        let number = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok());
        let seconds = number("JACOBIAN_SOUNDNESS_SECONDS");
        let instances = match (number("JACOBIAN_SOUNDNESS_INSTANCES"), seconds) {
            (Some(n), _) => (n / scale.max(1)).max(1),
            (None, Some(_)) => u64::MAX,
            (None, None) => default,
        };
        Budget {
            instances,
            deadline: seconds.map(|s| Instant::now() + Duration::from_secs(s)),
            seed: number("JACOBIAN_SOUNDNESS_SEED").unwrap_or(0x1a2b_3c4d),
        }
    }

    /// The instance indices to run, in order, until the count or the time runs out.
    pub fn indices(self) -> impl Iterator<Item = u64> {
        (0..self.instances).take_while(move |i| i % 64 != 0 || self.deadline.is_none_or(|d| Instant::now() < d))
    }
}

/// What a checker said of one certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    Rejected,
}

impl Verdict {
    /// `Accepted` when `accepted`.
    pub fn of(accepted: bool) -> Verdict {
        if accepted { Verdict::Accepted } else { Verdict::Rejected }
    }
}

/// The counts of one harness leg, printed and appended to the report.
#[derive(Debug)]
pub struct Tally {
    name: String,
    started: Instant,
    /// Instances judged.
    pub instances: u64,
    /// True claims accepted.
    pub true_accepted: u64,
    /// True claims rejected (their certificates were wrong, or the checker is incomplete).
    pub true_rejected: u64,
    /// False claims rejected.
    pub false_rejected: u64,
    /// By certificate class: (instances, accepted).
    classes: BTreeMap<&'static str, (u64, u64)>,
    /// Instances a reference judged too.
    pub compared: u64,
    /// Disagreements with a reference, by their documented explanation.
    explained: BTreeMap<&'static str, u64>,
}

impl Tally {
    /// A tally for checker `checker`, leg `leg` (brute force, or the reference's name).
    pub fn new(checker: &str, leg: &str) -> Tally {
        Tally {
            name: format!("{checker} / {leg}"),
            started: Instant::now(),
            instances: 0,
            true_accepted: 0,
            true_rejected: 0,
            false_rejected: 0,
            classes: BTreeMap::new(),
            compared: 0,
            explained: BTreeMap::new(),
        }
    }

    /// Count a judgement of a claim whose truth is known. A false claim
    /// accepted fails the test at once, naming `case` (what reproduces it).
    pub fn judge(&mut self, class: &'static str, claim_is_true: bool, verdict: Verdict, case: impl FnOnce() -> String) {
        self.instances += 1;
        let entry = self.classes.entry(class).or_default();
        entry.0 += 1;
        match (claim_is_true, verdict) {
            (true, Verdict::Accepted) => {
                self.true_accepted += 1;
                entry.1 += 1;
            }
            (true, Verdict::Rejected) => self.true_rejected += 1,
            (false, Verdict::Rejected) => self.false_rejected += 1,
            (false, Verdict::Accepted) => {
                panic!("UNSOUND: {} accepted a false claim (class {class})\n{}", self.name, case())
            }
        }
    }

    /// Count a comparison with a reference: equal verdicts, or a
    /// disagreement that `explain` attributes to a documented difference.
    /// An unexplained disagreement fails the test at once, naming `case`.
    pub fn compare(
        &mut self,
        ours: Verdict,
        reference: Verdict,
        explain: impl FnOnce() -> Option<&'static str>,
        case: impl FnOnce() -> String,
    ) {
        self.compared += 1;
        if ours == reference {
            return;
        }
        match explain() {
            Some(reason) => *self.explained.entry(reason).or_default() += 1,
            None => panic!(
                "DISAGREEMENT: {} says {ours:?}, the reference {reference:?}, and no documented difference explains it\n{}",
                self.name,
                case()
            ),
        }
    }

    /// Fail unless the run exercised both sides: at least `accepted` true
    /// claims accepted and `rejected` false claims rejected.
    pub fn assert_both_sides(&self, accepted: u64, rejected: u64) {
        assert!(
            self.true_accepted >= accepted && self.false_rejected >= rejected,
            "{}: too few of one side to mean anything: {}",
            self.name,
            self.line()
        );
    }

    /// Fail unless at least `n` instances were compared with the reference.
    pub fn assert_compared(&self, n: u64) {
        assert!(self.compared >= n, "{}: only {} compared with the reference", self.name, self.compared);
    }

    /// The counts as one line.
    pub fn line(&self) -> String {
        let mut out = format!(
            "{}: {} instances in {:.1} s; true claims {} accepted, {} rejected; false claims {} rejected, 0 accepted",
            self.name,
            self.instances,
            self.started.elapsed().as_secs_f64(),
            self.true_accepted,
            self.true_rejected,
            self.false_rejected
        );
        if self.compared > 0 {
            let explained: u64 = self.explained.values().sum();
            let _ = write!(
                out,
                "; {} compared, {} agreed, 0 unexplained disagreements",
                self.compared,
                self.compared - explained
            );
            for (reason, n) in &self.explained {
                let _ = write!(out, "; {n} {reason}");
            }
        }
        if !self.classes.is_empty() {
            out.push_str("; classes:");
            for (class, (n, accepted)) in &self.classes {
                let _ = write!(out, " {class} {n} ({accepted} accepted)");
            }
        }
        out
    }

    /// Print the counts and append them to `JACOBIAN_SOUNDNESS_REPORT`, if set.
    pub fn report(&self) {
        let line = self.line();
        println!("{line}");
        if let Some(path) = std::env::var_os("JACOBIAN_SOUNDNESS_REPORT") {
            let file = std::fs::OpenOptions::new().create(true).append(true).open(&path);
            if let Ok(mut file) = file {
                let _ = writeln!(file, "{line}");
            }
        }
    }
}

/// An outside program a harness compares with, found by an environment
/// variable or on `PATH`.
#[derive(Debug, Clone)]
pub struct Reference {
    /// Its name, as the report gives it.
    pub name: &'static str,
    /// The program.
    pub program: PathBuf,
}

/// What a reference program did.
#[derive(Debug)]
pub struct Run {
    /// Its exit code; `None` when it was killed by a signal (a crash) or ran out of time.
    pub code: Option<i32>,
    /// Standard output and error, together.
    pub output: String,
}

impl Reference {
    /// The program `env` names, else `program` on `PATH`. When neither is
    /// there, `None` — and a failure instead if `JACOBIAN_SOUNDNESS_REQUIRE`
    /// lists `name` (the test command lists every reference it installs, so
    /// none is skipped there without a failure).
    pub fn find(name: &'static str, env: &str, program: &str) -> Option<Reference> {
        let named = std::env::var_os(env).map(PathBuf::from).filter(|p| p.is_file());
        let found = named.or_else(|| {
            std::env::var_os("PATH")
                .and_then(|path| std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file()))
        });
        let required =
            std::env::var("JACOBIAN_SOUNDNESS_REQUIRE").is_ok_and(|list| list.split(',').any(|r| r.trim() == name));
        match found {
            Some(program) => Some(Reference { name, program }),
            None if required => panic!(
                "the reference {name} is required (JACOBIAN_SOUNDNESS_REQUIRE) but neither {env} nor {program} on PATH names it"
            ),
            None => {
                println!("{name}: not run (neither {env} nor {program} on PATH names it)");
                None
            }
        }
    }

    /// Run it with `args`, killed after `limit`.
    pub fn run(&self, args: &[&Path], limit: Duration) -> Run {
        run_program(&self.program, args, limit)
    }
}

/// Run `program` with `args` and no input, killed after `limit`.
pub fn run_program(program: &Path, args: &[&Path], limit: Duration) -> Run {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let (mut out, mut err) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut text);
        let mut more = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut more);
        text + &more
    });
    let deadline = Instant::now() + limit;
    let code = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code(),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_micros(200)),
            Err(e) => panic!("{}: {e}", program.display()),
        }
    };
    Run { code, output: reader.join().unwrap_or_default() }
}

/// A scratch directory for one harness's files, under the system's temporary directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jacobian-soundness-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}
