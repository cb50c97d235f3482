//! Budget presets: named shares of the operator's per-call budgets that a
//! request may ask for instead of numbers (`budget.preset`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use strum::EnumIter;

/// A named budget: a share of the operator's fuel (memory and output stay
/// the operator's). CONTRACT shows what each comes to and its typical seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, EnumIter)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BudgetPreset {
    /// A hundredth of the operator's fuel: a quick look.
    Quick,
    /// A tenth of it.
    Standard,
    /// All of it.
    Deep,
}

impl BudgetPreset {
    /// The preset's fuel under the operator's `fuel` (at least 1).
    pub fn fuel(self, fuel: u64) -> u64 {
        let share = match self {
            BudgetPreset::Quick => 100,
            BudgetPreset::Standard => 10,
            BudgetPreset::Deep => 1,
        };
        (fuel / share).max(1)
    }
}

/// Guest fuel burnt per second of guest compute on the benchmark machine,
/// the median of the capabilities measured there: what the typical seconds
/// of a budget preset are reckoned with for a capability with no measured
/// rate of its own (`cargo bench --bench runtime -- presets` prints this
/// machine's figures).
pub const FUEL_PER_SECOND: u64 = 10_500_000_000;

/// Each bundled capability's guest fuel per second on the benchmark machine,
/// on an input that runs for a tenth of a second or more (the others' calls
/// are too short to measure): `cargo bench --bench runtime -- presets`
/// measures them again and prints this table. They differ by a factor of
/// four: a search that touches little memory burns fuel fastest.
pub const MEASURED_FUEL_PER_SECOND: &[(&str, u64)] = &[
    ("graph.enumerate.nonisomorphic", 13_700_000_000),
    ("graph.enumerate.nonisomorphic.verify", 12_000_000_000),
    ("graph.induced_tree.maximum", 25_000_000_000),
    ("polynomial.compute.groebner_basis", 10_200_000_000),
    ("polynomial.groebner_basis.verify", 10_500_000_000),
    ("sat.certificate.verify", 9_000_000_000),
    ("sat.solve", 7_600_000_000),
    ("universal_algebra.search.countermodel", 14_900_000_000),
];

/// The rate a capability's preset seconds are reckoned with: its measured
/// rate, else [`FUEL_PER_SECOND`]; and whether it was measured.
pub fn rate(capability_id: &str) -> (u64, bool) {
    MEASURED_FUEL_PER_SECOND
        .iter()
        .find(|(id, _)| *id == capability_id)
        .map_or((FUEL_PER_SECOND, false), |(_, rate)| (*rate, true))
}

/// The rate a capability's preset seconds are reckoned with.
pub fn fuel_per_second(capability_id: &str) -> u64 {
    rate(capability_id).0
}
