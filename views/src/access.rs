//! Who may read a run's outputs: the one rule every page, API answer, export and
//! artifact goes through.
//!
//! RExBench's dataset terms forbid making agent outputs public, so a task's card says
//! whether its runs' outputs (patches, logs, trajectories) are `public` or `private`
//! (default private), and a maintainer may change that later (`store.set_outputs`,
//! recorded in the change log). Every number about a run stays public whatever its
//! task says; what a private run withholds from a reader who may not read it is the
//! outputs' content and anything quoted from it: the text of its integrity findings.
//!
//! A view asks [`Access`] once per run or artifact; it never decides for itself.

use std::collections::{BTreeMap, BTreeSet};

use store::{FindingRecord, Outputs, RunFinding, TaskId};

/// Who is reading. A page or answer for [`Reader::Public`] is what anyone gets, and is
/// the only kind a cache may keep.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Reader {
    /// Anyone: no credentials.
    Public,
    /// The benchmark's maintainers: every run's outputs. `who` says how they proved it
    /// (`admin token`, `sign-in link`, `key <keyid> (<owner>)`), for the access log.
    Maintainer { who: String, keyid: Option<String> },
    /// A submitter signed in with their registered key: the outputs of the bundles
    /// that key signed.
    Submitter { keyid: String, owner: String },
}

impl Reader {
    /// Whether what is made for this reader may be cached or shared with another.
    pub fn is_public(&self) -> bool {
        *self == Reader::Public
    }

    /// Who, in words, as the access log names them.
    pub fn who(&self) -> String {
        match self {
            Reader::Public => "anyone".to_owned(),
            Reader::Maintainer { who, .. } => format!("maintainer ({who})"),
            Reader::Submitter { keyid, owner } => format!("submitter key {keyid} ({owner})"),
        }
    }

    pub fn keyid(&self) -> Option<&str> {
        match self {
            Reader::Public => None,
            Reader::Maintainer { keyid, .. } => keyid.as_deref(),
            Reader::Submitter { keyid, .. } => Some(keyid),
        }
    }
}

/// What a reader may read: each task's outputs as they are now (its card's word, where
/// no maintainer has changed it since), who the reader is, and the bundles that are
/// theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    outputs: BTreeMap<TaskId, Outputs>,
    reader: Reader,
    /// A submitter's bundles (those their key signed).
    own: BTreeSet<String>,
}

impl Access {
    /// From the cards' words and the maintainers' changes (which win), for `reader`,
    /// whose own bundles are `own`.
    pub fn new(
        cards: impl IntoIterator<Item = (TaskId, Outputs)>,
        changed: BTreeMap<TaskId, Outputs>,
        reader: Reader,
        own: BTreeSet<String>,
    ) -> Access {
        let mut outputs: BTreeMap<TaskId, Outputs> = cards.into_iter().collect();
        outputs.extend(changed);
        Access { outputs, reader, own }
    }

    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// A task's outputs; a task no card names is private.
    pub fn outputs(&self, task: &str) -> Outputs {
        self.outputs.get(task).copied().unwrap_or_default()
    }

    /// Whether anyone may read the outputs of a run of `task`.
    pub fn public(&self, task: &str) -> bool {
        self.outputs(task) == Outputs::Public
    }

    /// Whether the reader may read the outputs of a run of `task` in `bundle`.
    pub fn may_read(&self, task: &str, bundle: &str) -> bool {
        self.public(task)
            || match &self.reader {
                Reader::Public => false,
                Reader::Maintainer { .. } => true,
                Reader::Submitter { .. } => self.own.contains(bundle),
            }
    }

    /// Whether the reader may read an artifact that the runs `runs` (task, bundle)
    /// refer to: a blob is readable while some run the reader may read refers to it
    /// (content-addressed, one blob may serve several runs). No run refers to it:
    /// nobody reads it.
    pub fn may_read_artifact(&self, runs: &[(TaskId, String)]) -> bool {
        runs.iter().any(|(t, b)| self.may_read(t.as_str(), b))
    }

    /// Whether anyone may read such an artifact (and any cache keep it).
    pub fn public_artifact(&self, runs: &[(TaskId, String)]) -> bool {
        runs.iter().any(|(t, _)| self.public(t.as_str()))
    }

    /// A run's findings as the reader may see them: by check and location, their text
    /// (which quotes the outputs) withheld where the outputs are.
    pub fn findings(&self, task: &str, bundle: &str, findings: &mut [RunFinding]) {
        if !self.may_read(task, bundle) {
            findings.iter_mut().for_each(withhold);
        }
    }

    /// Findings with their runs (an agent's, the failure explorer's), the same way.
    pub fn finding_records(&self, records: &mut [FindingRecord]) {
        for r in records {
            if !self.may_read(r.task.as_str(), &r.bundle_id) {
                withhold(&mut r.finding);
            }
        }
    }
}

/// What a finding about private outputs says to a reader who may not read them.
pub const WITHHELD: &str = "The finding's text quotes the run's outputs, which are private: its check and \
                            where it points (artifact and line) are shown.";

fn withhold(f: &mut RunFinding) {
    // A trajectory's findings name their step first (`step 12: …`): the step is a
    // place, not a quote, so it stays.
    let step = f
        .message
        .strip_prefix("step ")
        .and_then(|m| m.split_once(':'))
        .map(|(n, _)| n)
        .filter(|n| !n.is_empty() && n.len() <= 12 && n.bytes().all(|b| b.is_ascii_digit()));
    f.message = match step {
        Some(n) => format!("step {n}: {WITHHELD}"),
        None => WITHHELD.to_owned(),
    };
    f.withheld = true;
}

#[cfg(feature = "db")]
pub use load::{artifact, load, logged};

#[cfg(feature = "db")]
mod load {
    use super::{Access, Reader};
    use crate::ViewError;
    use crate::catalog::Catalog;

    /// What `reader` may read now: the tasks' outputs (the cards', and the maintainers'
    /// changes) and, for a submitter, the bundles their key signed.
    pub async fn load(store: &store::Store, catalog: &Catalog, reader: &Reader) -> Result<Access, ViewError> {
        let cards = catalog.tasks.iter().map(|t| (t.id.clone(), t.outputs));
        let own = match reader {
            Reader::Submitter { keyid, .. } => store.bundles_signed_by(keyid).await?,
            Reader::Public | Reader::Maintainer { .. } => Default::default(),
        };
        Ok(Access::new(cards, store.outputs_overrides().await?, reader.clone(), own))
    }

    /// Records that the reader read private content (`via` a run's `page` or `api`
    /// answer, or an `artifact`): every such read is in the access log.
    pub async fn logged(
        store: &store::Store,
        access: &Access,
        via: &str,
        run_id: Option<i64>,
        digest: Option<&str>,
    ) -> Result<(), ViewError> {
        let reader = access.reader();
        Ok(store.log_access(&reader.who(), reader.keyid(), via, run_id, digest).await?)
    }

    /// An artifact as the reader may have it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Grant {
        /// Anyone may read it (and a cache keep it).
        Public,
        /// This reader may: a private output, the read logged.
        Private,
        /// Not this reader.
        Refused,
    }

    /// Whether the reader may have the artifact `digest` (which some run refers to),
    /// logging a read of private content.
    pub async fn artifact(store: &store::Store, access: &Access, digest: &str) -> Result<Grant, ViewError> {
        let runs = store.artifact_runs(digest).await?;
        Ok(if access.public_artifact(&runs) {
            Grant::Public
        } else if access.may_read_artifact(&runs) {
            logged(store, access, "artifact", None, Some(digest)).await?;
            Grant::Private
        } else {
            Grant::Refused
        })
    }
}

#[cfg(feature = "db")]
pub use load::Grant;

#[cfg(test)]
mod tests {
    use super::*;

    fn access(reader: Reader) -> Access {
        Access::new(
            [
                ("cogs".into(), Outputs::Private),
                ("wordfreq".into(), Outputs::Public),
                ("csv".into(), Outputs::Public),
            ],
            BTreeMap::from([("csv".into(), Outputs::Private)]),
            reader,
            BTreeSet::from(["mine".to_owned()]),
        )
    }

    fn maintainer() -> Reader {
        Reader::Maintainer { who: "admin token".into(), keyid: None }
    }

    fn submitter() -> Reader {
        Reader::Submitter { keyid: "k".into(), owner: "Team".into() }
    }

    #[test]
    fn the_public_reads_public_tasks_only_and_maintainers_read_all() {
        let a = access(Reader::Public);
        assert!(a.may_read("wordfreq", "b"));
        assert!(!a.may_read("cogs", "mine"));
        assert!(!a.may_read("csv", "b"), "a maintainer's change wins over the card");
        assert!(!a.may_read("unknown", "b"), "a task no card names is private");
        let m = access(maintainer());
        for t in ["wordfreq", "cogs", "csv", "unknown"] {
            assert!(m.may_read(t, "b"));
        }
    }

    #[test]
    fn a_submitter_reads_the_private_outputs_of_their_own_bundles_only() {
        let s = access(submitter());
        assert!(s.may_read("cogs", "mine"));
        assert!(!s.may_read("cogs", "theirs"));
        assert!(s.may_read("wordfreq", "theirs"), "public outputs are anyone's");
    }

    #[test]
    fn an_artifact_is_readable_while_some_run_the_reader_may_read_refers_to_it() {
        let a = access(Reader::Public);
        let shared = [("cogs".into(), "b".to_owned()), ("wordfreq".into(), "b".to_owned())];
        assert!(a.may_read_artifact(&shared) && a.public_artifact(&shared));
        let private = [("cogs".into(), "mine".to_owned()), ("csv".into(), "b".to_owned())];
        assert!(!a.may_read_artifact(&private) && !a.public_artifact(&private));
        assert!(access(submitter()).may_read_artifact(&private), "one of them is the submitter's");
        assert!(!access(submitter()).may_read_artifact(&private[1..]));
        assert!(!a.may_read_artifact(&[]));
        assert!(!access(maintainer()).may_read_artifact(&[]), "no run refers to it: nothing to read");
    }

    #[test]
    fn a_withheld_finding_keeps_its_check_place_and_step() {
        let mut f = vec![RunFinding {
            id: "1-server-0".into(),
            found_by: store::FoundBy::Server,
            check: "trajectory-evidence".into(),
            message: "step 12: the agent's `bash` call writes `/tests/x`".into(),
            artifact: Some("x-trajectory".into()),
            line: Some(40),
            review: None,
            withheld: false,
        }];
        access(submitter()).findings("cogs", "theirs", &mut f);
        assert_eq!(f[0].message, format!("step 12: {WITHHELD}"));
        assert!(f[0].withheld && f[0].line == Some(40) && f[0].check == "trajectory-evidence");
    }
}
