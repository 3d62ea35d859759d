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

use store::{ArtifactUse, FindingRecord, Outputs, RunFinding, TaskId};

/// The role of the log in which a checker says what it read and what it expected.
pub const CHECKER_LOG: &str = "checker_log";

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

    /// Whether this reader may read what only a key's holder and the maintainers may (a
    /// key request's contact and note, the bundles it holds while pending).
    pub fn holds_or_maintains(&self, keyid: &str) -> bool {
        match self {
            Reader::Public => false,
            Reader::Maintainer { .. } => true,
            Reader::Submitter { keyid: own, .. } => own == keyid,
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
    /// The tasks whose check is the maintainers' (not on the card): what shows its
    /// expected values, tolerances or gold paths is theirs alone.
    gold: BTreeSet<TaskId>,
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
        Access { outputs, gold: BTreeSet::new(), reader, own }
    }

    /// The same, knowing which tasks' checks are private (`gold`).
    pub fn with_gold(mut self, gold: impl IntoIterator<Item = TaskId>) -> Access {
        self.gold = gold.into_iter().collect();
        self
    }

    fn is_maintainer(&self) -> bool {
        matches!(self.reader, Reader::Maintainer { .. })
    }

    /// Whether an artifact playing `role` for a run of `task` (`in_reproduction`: in a
    /// maintainers' re-run of it) may show the task's success criteria where its check is
    /// private: the checker's log (what it read, what it expected, within what), and
    /// everything a re-run made on the maintainers' machine beside their gold (its
    /// stdout, stderr, provenance record, the words of its findings): what a hostile patch
    /// could have printed there is the maintainers' alone.
    pub fn reveals_gold(&self, task: &str, role: &str, in_reproduction: bool) -> bool {
        self.gold.contains(task) && (role == CHECKER_LOG || in_reproduction)
    }

    /// Whether the reader may read the metrics of a run of `task` in `bundle`
    /// (`in_reproduction`: of the maintainers' re-run of it). Where the task's check is
    /// private its metrics are its gold (bundle spec §4j): a submitted run's follow its
    /// outputs (the submitter's and the maintainers'), a re-run's are the maintainers'
    /// (as everything else it made beside the gold). A public check's are anyone's.
    pub fn may_read_metrics(&self, task: &str, bundle: &str, in_reproduction: bool) -> bool {
        if !self.gold.contains(task) {
            true
        } else if in_reproduction {
            self.is_maintainer()
        } else {
            self.may_read(task, bundle)
        }
    }

    /// Whether the reader may know what a re-run of a run of `task` made beside its
    /// verdict (its duration, its artifacts' digests and sizes, its reproduction's
    /// envelope): anyone, unless the task's check is private; then the maintainers only
    /// (spec §4j), for a patch could shape any of them to signal what it read on their
    /// machine. Its outcome, error class and held-out bit stay public.
    pub fn may_know_rerun(&self, task: &str) -> bool {
        !self.gold.contains(task) || self.is_maintainer()
    }

    /// `reproduction` (of a run of `task`) as the reader may know it.
    pub fn reproduction(&self, task: &str, bundle: &str, reproduction: &mut store::RunReproduction) {
        self.mark(task, &mut reproduction.artifacts, true);
        if !self.may_read_metrics(task, bundle, true) {
            reproduction.metrics.clear();
            reproduction.metrics_withheld = true;
        }
        if !self.may_know_rerun(task) {
            reproduction.artifacts.clear();
            reproduction.duration_s = None;
            reproduction.outputs_withheld = true;
        }
    }

    /// An agent's re-run runs as the reader may know them.
    pub fn reproduced(&self, runs: &mut [store::ReproducedRun]) {
        for r in runs {
            if !self.may_know_rerun(r.task.as_str()) {
                r.duration_s = None;
            }
        }
    }

    /// Whether the reader may read what plays `role` for a run of `task` in `bundle`:
    /// the outputs' rule, and what shows the gold for the maintainers only.
    pub fn may_read_role(&self, task: &str, bundle: &str, role: &str, in_reproduction: bool) -> bool {
        if self.reveals_gold(task, role, in_reproduction) {
            self.is_maintainer()
        } else {
            self.may_read(task, bundle)
        }
    }

    /// Marks in `artifacts` (of a run of `task`, or of its re-run) what only the
    /// maintainers read.
    pub fn mark(&self, task: &str, artifacts: &mut [store::ArtifactRef], in_reproduction: bool) {
        for a in artifacts {
            a.maintainers_only = self.reveals_gold(task, &a.role, in_reproduction);
        }
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

    /// Whether the reader may read an artifact used as `uses` say: a blob is readable
    /// while one use of it is (content-addressed, one blob may serve several runs). No
    /// run refers to it: nobody reads it.
    pub fn may_read_artifact(&self, uses: &[ArtifactUse]) -> bool {
        uses.iter().any(|u| self.may_read_role(u.task.as_str(), &u.bundle, &u.role, u.reproduction))
    }

    /// Whether anyone may read such an artifact (and any cache keep it).
    pub fn public_artifact(&self, uses: &[ArtifactUse]) -> bool {
        uses.iter().any(|u| {
            self.public(u.task.as_str()) && !self.reveals_gold(u.task.as_str(), &u.role, u.reproduction)
        })
    }

    /// Of the runs an envelope quotes (`quoting`, of the bundle `bundle_id`, or, for a
    /// reproduction, of the bundle it re-ran, `of`), those whose findings' words this
    /// reader may not read: where there are any, the envelope is withheld from them.
    pub fn withheld_quotes(
        &self,
        quoting: &[(TaskId, String)],
        bundle_id: &str,
        of: Option<&str>,
    ) -> Vec<String> {
        quoting
            .iter()
            .filter(|(task, _)| {
                !self.may_read_role(
                    task.as_str(),
                    of.unwrap_or(bundle_id),
                    store::FINDINGS_ROLE,
                    of.is_some(),
                )
            })
            .map(|(_, run)| run.clone())
            .collect()
    }

    /// Whether anyone may read what `quoting` quotes.
    pub fn quotes_public(&self, quoting: &[(TaskId, String)], of: Option<&str>) -> bool {
        quoting.iter().all(|(task, _)| {
            self.public(task.as_str())
                && !self.reveals_gold(task.as_str(), store::FINDINGS_ROLE, of.is_some())
        })
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

/// The runs of a signed manifest stored before what they say left manifests, each as
/// its task and `task/hint/attempt`: findings that still hold their words (spec §4g: a
/// finding without `text_digest`), and metrics stated of a task whose check is private
/// (`private_check`; spec §4j). An envelope with none is anyone's.
#[cfg(feature = "db")]
pub fn quoting_runs(
    manifest: &bundle::Manifest,
    private_check: impl Fn(&str) -> bool,
) -> Vec<(TaskId, String)> {
    manifest
        .runs
        .iter()
        .filter(|r| {
            r.findings.iter().any(|f| f.text_digest.is_none())
                || (!r.metrics.is_empty() && private_check(r.task.as_str()))
        })
        .map(|r| (r.task.clone(), format!("{}/{}/{}", r.task, r.hint, r.attempt)))
        .collect()
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
        let gold = catalog.tasks.iter().filter(|t| t.check_private).map(|t| t.id.clone());
        Ok(Access::new(cards, store.outputs_overrides().await?, reader.clone(), own).with_gold(gold))
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
        let uses = store.artifact_uses(digest).await?;
        Ok(if access.public_artifact(&uses) {
            Grant::Public
        } else if access.may_read_artifact(&uses) {
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
        let shared = [used("cogs", "b", "patch", false), used("wordfreq", "b", "patch", false)];
        assert!(a.may_read_artifact(&shared) && a.public_artifact(&shared));
        let private = [used("cogs", "mine", "patch", false), used("csv", "b", "patch", false)];
        assert!(!a.may_read_artifact(&private) && !a.public_artifact(&private));
        assert!(access(submitter()).may_read_artifact(&private), "one of them is the submitter's");
        assert!(!access(submitter()).may_read_artifact(&private[1..]));
        assert!(!a.may_read_artifact(&[]));
        assert!(!access(maintainer()).may_read_artifact(&[]), "no run refers to it: nothing to read");
    }

    fn used(task: &str, bundle: &str, role: &str, reproduction: bool) -> ArtifactUse {
        ArtifactUse { task: task.into(), bundle: bundle.into(), role: role.into(), reproduction }
    }

    #[test]
    fn what_shows_a_private_check_is_the_maintainers_alone() {
        let gold = |r: Reader| access(r).with_gold(["cogs".into(), "wordfreq".into()]);
        // The submitter's own run: its checker's log says what the gold expects.
        let log = [used("cogs", "mine", CHECKER_LOG, false)];
        assert!(!gold(submitter()).may_read_artifact(&log));
        assert!(gold(maintainer()).may_read_artifact(&log));
        // Even where the outputs are public, a private check's log is not.
        let public_log = [used("wordfreq", "b", CHECKER_LOG, false)];
        assert!(
            !gold(Reader::Public).may_read_artifact(&public_log)
                && !gold(Reader::Public).public_artifact(&public_log)
        );
        // A re-run's findings' words were made with the gold; the submitted run's were not.
        let rerun_words = [used("cogs", "mine", store::FINDINGS_ROLE, true)];
        assert!(!gold(submitter()).may_read_artifact(&rerun_words));
        assert!(gold(submitter()).may_read_artifact(&[used("cogs", "mine", store::FINDINGS_ROLE, false)]));
        // Everything else a re-run made beside the gold is the maintainers' too: a patch
        // could print the gold into its stdout.
        for role in ["stdout", "stderr", "x-provenance"] {
            assert!(!gold(submitter()).may_read_artifact(&[used("cogs", "mine", role, true)]), "{role}");
            assert!(gold(maintainer()).may_read_artifact(&[used("cogs", "mine", role, true)]), "{role}");
        }
        // The submitted run's own outputs stay the submitter's.
        assert!(gold(submitter()).may_read_artifact(&[used("cogs", "mine", "stdout", false)]));
        // A public check shows nothing secret.
        assert!(access(submitter()).may_read_artifact(&log));
    }

    #[test]
    fn a_private_checks_metrics_follow_the_outputs_and_a_reruns_are_the_maintainers() {
        let gold = |r: Reader| access(r).with_gold(["cogs".into()]);
        assert!(!gold(Reader::Public).may_read_metrics("cogs", "mine", false));
        assert!(gold(submitter()).may_read_metrics("cogs", "mine", false));
        assert!(!gold(submitter()).may_read_metrics("cogs", "theirs", false));
        assert!(!gold(submitter()).may_read_metrics("cogs", "mine", true));
        assert!(gold(maintainer()).may_read_metrics("cogs", "theirs", true));
        // A public check's metrics are anyone's.
        assert!(gold(Reader::Public).may_read_metrics("othello", "theirs", true));
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
