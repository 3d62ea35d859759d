//! The marks a board gives a bundle's runs from the bundle alone and its price table
//! (bundle spec §4m, §5b): each run's cost mark, and a `copied-attempt` finding on each
//! success whose patch has the identity of another success's of the same task. A marked
//! run is stored and shown, but counts for less than it states: its cost at the most any
//! of its figures says, a copied attempt flagged.
//!
//! One home for the three places that give them: the server at ingest (beside its other
//! checks), `rexbench verify` before a bundle is sent, and the conformance vectors
//! (`expected.json`'s `marks`), which the tests hold all of them to.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read};

use bundle::{ArtifactInfo, ArtifactRole, ArtifactSink, Digest, Finding, Manifest, RunMarks};

use crate::cost::{self, Checked, Prices};
use crate::integrity::{TRAJECTORY, copied_patches};

/// What the marks read of a bundle: every run's patch and trajectory, by digest.
pub fn wanted(manifest: &Manifest) -> BTreeSet<String> {
    let patch = ArtifactRole::Patch.to_string();
    manifest
        .runs
        .iter()
        .flat_map(|r| [r.artifacts.get(&patch), r.artifacts.get(TRAJECTORY)])
        .flatten()
        .cloned()
        .collect()
}

/// An [`ArtifactSink`] that keeps the artifacts [`wanted`] names of a manifest read
/// before (a second pass over a verified bundle), and lets the rest pass. The verifier
/// bounds each artifact's size as it reads it.
#[derive(Debug, Default)]
pub struct WantedArtifacts {
    wanted: BTreeSet<String>,
    /// The artifacts kept, by digest: what [`of`] reads.
    pub read: BTreeMap<String, Vec<u8>>,
}

impl WantedArtifacts {
    pub fn new(manifest: &Manifest) -> WantedArtifacts {
        WantedArtifacts { wanted: wanted(manifest), read: BTreeMap::new() }
    }
}

impl ArtifactSink for WantedArtifacts {
    fn artifact(&mut self, digest: &Digest, _: &ArtifactInfo, content: &mut dyn Read) -> io::Result<()> {
        let hex = digest.to_hex();
        if !self.wanted.contains(&hex) {
            return io::copy(content, &mut io::sink()).map(drop);
        }
        let mut bytes = Vec::new();
        content.read_to_end(&mut bytes)?;
        self.read.insert(hex, bytes);
        Ok(())
    }
}

/// Each run's cost as the board counts it, each patch's identity, and the copied
/// attempts among the bundle's own runs.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    /// By run index.
    pub costs: BTreeMap<usize, Checked>,
    /// Each patch's identity (§5b), by the patch artifact's digest.
    pub identities: BTreeMap<String, String>,
    /// By run index.
    pub copied: BTreeMap<usize, Finding>,
}

/// The marks of `manifest`'s runs, priced with `prices`; `read` holds the artifacts
/// [`wanted`] names (one it lacks is a patch or trajectory the board did not read).
pub fn of(prices: &Prices, manifest: &Manifest, read: &BTreeMap<String, Vec<u8>>) -> Marks {
    let patch = ArtifactRole::Patch.to_string();
    let costs = manifest
        .runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let trajectory = run.artifacts.get(TRAJECTORY).and_then(|hex| read.get(hex)).map(Vec::as_slice);
            (i, cost::check_run(prices, manifest, run, trajectory))
        })
        .collect();
    let identities: BTreeMap<String, String> = manifest
        .runs
        .iter()
        .filter_map(|r| r.artifacts.get(&patch))
        .filter_map(|hex| {
            let bytes = read.get(hex)?;
            crate::diff::identity(&String::from_utf8_lossy(bytes)).map(|id| (hex.clone(), id))
        })
        .collect();
    let copied = copied_patches(&manifest.runs, |r| {
        r.artifacts.get(&patch).and_then(|d| identities.get(d)).map(String::as_str)
    });
    Marks { costs, identities, copied }
}

impl Marks {
    /// Each marked run's marks (its cost mark, then `copied-attempt`), in the bundle's
    /// order of runs; a run without a mark is left out.
    pub fn by_run(&self, manifest: &Manifest) -> Vec<RunMarks> {
        manifest
            .runs
            .iter()
            .enumerate()
            .filter_map(|(i, run)| {
                let cost = self.costs.get(&i).and_then(|c| c.mark).map(|m| m.to_string());
                let copied = self.copied.get(&i).map(|f| f.check.clone());
                let marks: Vec<String> = cost.into_iter().chain(copied).collect();
                (!marks.is_empty()).then(|| RunMarks {
                    task: run.task.as_str().to_owned(),
                    hint: run.hint,
                    attempt: run.attempt,
                    marks,
                })
            })
            .collect()
    }
}
