//! Reproductions (spec §4d, §4e), in five parts: [`sampling`] (the sample each
//! self-reported submission gets at ingest, and the sampling keys behind it, committed
//! then revealed), [`queue`] (the maintainers' queue of sampled runs and what the
//! re-runs found), [`ingest`] (a reproduction's ingest: its runs beside the ones they
//! re-ran, all in one transaction), [`refuted`] (the findings where a re-run's final
//! success differs, and the tries of a re-run that could not complete) and [`taint`]
//! (what a caught lie costs the rest of its submission).

mod ingest;
mod queue;
mod refuted;
pub(crate) mod sampling;
pub(crate) mod taint;

use bundle::VerifiedBundle;

pub(crate) use queue::{Carried, not_reproduced_before};
pub use sampling::PublicSampled;
pub(crate) use sampling::write_sample;
pub use taint::UNVERIFIED;

/// The check a reproduced run that differs from its submission gets (spec §4a).
pub const NOT_REPRODUCED: &str = "not-reproduced";

/// Whether a verified bundle is a reproduction rather than a submission.
pub fn is_reproduction(bundle: &VerifiedBundle) -> bool {
    bundle.manifest.reproduction.is_some()
}
