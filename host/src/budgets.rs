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

/// Guest fuel burnt per second of guest compute on the benchmark machine
/// (`cargo bench --bench runtime -- presets` prints this machine's): what
/// the typical seconds of a budget preset are reckoned with.
pub const FUEL_PER_SECOND: u64 = 11_000_000_000;
