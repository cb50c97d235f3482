//! Archives: `archive`, and the offline re-checks `replay`, `verify` and `compare`.

use std::path::PathBuf;

use crate::cli::error::Context;

use crate::cli::Place;
use crate::cli::args::{ArchiveArgs, CompareArgs, ReplayArgs, VerifyArgs};
use crate::cli::support::{offline, open, read_file};

/// `jacobian archive`.
pub fn archive(place: Place, args: ArchiveArgs) -> crate::cli::error::Result<()> {
    let Place { data_dir, store, .. } = place;
    let ArchiveArgs { experiment, out } = args;
    let runtime = open(data_dir, &store)?;
    let archive = jacobian::archive::Archive::build(&runtime, &experiment)?;
    // Written as it is serialized, not built in memory a second time.
    let file = std::fs::File::create(&out).with_context(|| format!("writing {}", out.display()))?;
    let mut writer = std::io::BufWriter::new(file);
    serde_json::to_writer(&mut writer, &archive).with_context(|| format!("writing {}", out.display()))?;
    std::io::Write::flush(&mut writer).with_context(|| format!("writing {}", out.display()))?;
    println!("{} ({} episodes) written to {}", archive.pack_hash, archive.episodes.len(), out.display());
    Ok(())
}

/// `jacobian replay`.
pub fn replay(place: Place, args: ReplayArgs) -> crate::cli::error::Result<()> {
    let Place { .. } = place;
    let ReplayArgs { archive, trust } = args;
    let report = offline(&archive, &trust, "replay", jacobian::archive::replay)?;
    if !report.identical {
        crate::cli::Exit::Negative.exit();
    }
    Ok(())
}

/// `jacobian verify`.
pub fn verify(place: Place, args: VerifyArgs) -> crate::cli::error::Result<()> {
    let Place { .. } = place;
    let VerifyArgs { archive, trust } = args;
    let report = offline(&archive, &trust, "verify", jacobian::archive::verify)?;
    let all_verified = report.verdicts.iter().all(|v| {
        v.status == Some(jacobian::contract::VerificationStatus::Verified) && v.matches_archive != Some(false)
    });
    if !all_verified {
        crate::cli::Exit::Negative.exit();
    }
    Ok(())
}

/// `jacobian compare`.
pub fn compare(place: Place, args: CompareArgs) -> crate::cli::error::Result<()> {
    let Place { .. } = place;
    let CompareArgs { left, right, ignore_contract_changes } = args;
    let parse = |path: &PathBuf| -> crate::cli::error::Result<serde_json::Value> {
        serde_json::from_slice(&read_file(path)?).with_context(|| format!("{}: not JSON", path.display()))
    };
    let (left, right) = (parse(&left)?, parse(&right)?);
    let comparison = if ignore_contract_changes {
        jacobian::archive::compare_ignoring_contract_changes(&left, &right)
    } else {
        jacobian::archive::compare(&left, &right)
    };
    println!("{}", serde_json::to_string_pretty(&comparison)?);
    if !comparison.identical {
        crate::cli::Exit::Negative.exit();
    }
    Ok(())
}
