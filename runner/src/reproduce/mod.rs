//! `rexbench reproduce`: the maintainers' side of a reproduction (spec §4d). It reads
//! the leaderboard's queue of sampled runs, fetches each run's submitted patch (checked
//! against its digest), evaluates the patches as any evaluation (this machine, a
//! container, or Slurm), and packs, signs and submits one reproduction per submission,
//! recording the executor's hardware and every run's duration.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use bundle::{Digest, HeldOut, Hint, Outcome, Reproduction, SecretKey};
use serde::Deserialize;

use crate::Error;
use crate::audit::api::Api;
use crate::evaluate::{self, benchmark_for};
use crate::results::{RunRecord, run_dir};
use crate::submit::Verdict;
use crate::task::load_all;

mod folders;

use folders::{BUNDLE, archive, cut_logs, prune};

/// Room left under the server's bundle limit for what a pack adds beside the artifacts.
const FIT_MARGIN: u64 = 1024 * 1024;
/// The shortest a re-run's log is cut to, to make its reproduction fit.
const MIN_LOG_CAP: u64 = 4096;

/// What `reproduce` needs beside the leaderboard.
#[derive(Debug, Clone)]
pub struct Options {
    /// The leaderboard, e.g. `https://rexbench.example.org`.
    pub server: String,
    /// A token that reaches the queue and private outputs: the admin token.
    pub token: String,
    /// The maintainer key that signs the reproductions.
    pub key: PathBuf,
    /// Where each submission's re-run is kept: `<out>/<bundle id>/` (resumable).
    pub out: PathBuf,
    /// Only this submission's sample.
    pub bundle: Option<String>,
    /// List what waits; re-run nothing.
    pub dry_run: bool,
    /// The evaluation's own options; `outputs` and `out` are set for each submission.
    pub evaluate: evaluate::Options,
    /// The largest bundle the server takes, in bytes (spec §7: 256 MiB unless it says
    /// otherwise): a reproduction's logs are cut until it fits.
    pub bundle_limit: u64,
}

/// A sampled run, as the queue gives it (only what `reproduce` reads).
#[derive(Debug, Clone, Deserialize)]
pub struct QueuedRun {
    pub run_id: i64,
    pub bundle_id: String,
    pub agent_id: String,
    pub task_set_digest: String,
    pub task: String,
    pub hint: Hint,
    pub attempt: u32,
    pub outcome: Outcome,
    pub patch: Option<String>,
    /// The held-out variant (its digest) this run is re-run on as well (spec §4l): a
    /// sampled success, where its task had variants when it was sampled.
    #[serde(default)]
    pub heldout_variant: Option<String>,
    /// Its re-runs so far that ended `infra_error`, each a try (spec §4d).
    #[serde(default)]
    pub tries: u32,
}

/// One page of the queue.
#[derive(Debug, Deserialize)]
struct QueueAnswer {
    runs: Vec<QueuedRun>,
    total: usize,
}

/// Runs asked for in each page of the queue: the most the server gives in one.
const QUEUE_PAGE: usize = 1000;

/// What came of one submission's sample.
#[derive(Debug)]
pub struct Report {
    pub bundle_id: String,
    pub agent_id: String,
    /// Each run re-run: its key, as submitted, as re-run.
    pub runs: Vec<(String, Outcome, Outcome)>,
    /// Runs whose re-run (on their task or its held-out variant) ended `infra_error`:
    /// each submitted as a try (spec §4d), with the tries it has had before this one.
    pub inconclusive: Vec<(String, u32)>,
    /// Each run re-run on a held-out variant: its key, the variant's digest, its outcome there.
    pub heldout: Vec<(String, String, Outcome)>,
    /// The reproduction bundle, and the server's verdict on it.
    pub bundle: Option<PathBuf>,
    pub verdict: Option<Verdict>,
    /// Why nothing was re-run, where nothing was.
    pub skipped: Option<String>,
}

impl Report {
    pub fn differed(&self) -> usize {
        self.runs.iter().filter(|(_, a, b)| a.succeeded() != b.succeeded()).count()
    }
}

/// The queue of sampled runs not yet reproduced, every page of it, oldest sample first.
pub(crate) fn queue(api: &Api) -> Result<Vec<QueuedRun>, Error> {
    let mut runs = Vec::new();
    for page in 1.. {
        let answer = api.json::<QueueAnswer>(&format!(
            "/api/v1/admin/reproductions?status=pending&page={page}&per_page={QUEUE_PAGE}"
        ))?;
        let last = answer.runs.is_empty() || page * QUEUE_PAGE >= answer.total;
        runs.extend(answer.runs);
        if last {
            break;
        }
    }
    Ok(runs)
}

/// Re-runs the queue's runs, one reproduction per submission.
pub fn reproduce(opts: &Options) -> Result<Vec<Report>, Error> {
    if opts.evaluate.confinement == crate::sandbox::Confinement::Unsandboxed {
        return Err(Error::Setup(
            "reproduce never runs unsandboxed: a submitter's patch runs beside the maintainers' gold, keys and token"
                .into(),
        ));
    }
    // What re-runs leave here holds held-out inputs and checkers' logs of private
    // checks: the maintainers' only, whatever the umask (a Slurm scratch is shared).
    folders::private_dir(&opts.out)?;
    let api = Api::new(&opts.server, Some(&opts.token));
    let key = crate::keyfile::read_secret(&opts.key)?;
    let mut by_bundle: BTreeMap<String, Vec<QueuedRun>> = BTreeMap::new();
    for run in queue(&api)? {
        // A sampled infra_error run without a patch has nothing to re-run (spec §4e): the
        // queue keeps it, marked so, and the strict view counts it as a failure.
        if run.patch.is_none() {
            eprintln!(
                "run {} of {} ({}): sampled, but it carries no patch: nothing to re-run",
                label(&run),
                run.bundle_id,
                run.agent_id
            );
            continue;
        }
        if opts.bundle.as_ref().is_none_or(|b| *b == run.bundle_id) {
            by_bundle.entry(run.bundle_id.clone()).or_default().push(run);
        }
    }
    if opts.dry_run {
        return Ok(by_bundle
            .into_iter()
            .map(|(bundle_id, runs)| Report {
                agent_id: runs[0].agent_id.clone(),
                runs: runs.iter().map(|r| (label(r), r.outcome, r.outcome)).collect(),
                bundle_id,
                inconclusive: Vec::new(),
                heldout: Vec::new(),
                bundle: None,
                verdict: None,
                skipped: Some("--dry-run".into()),
            })
            .collect());
    }
    let cards = load_all(&opts.evaluate.tasks_dir)?;
    let mut reports = Vec::new();
    for (bundle_id, runs) in by_bundle {
        let report = match reproduce_one(&api, &key, opts, &cards, &bundle_id, &runs) {
            Ok(r) => r,
            Err(Skip(why)) => Report {
                agent_id: runs[0].agent_id.clone(),
                bundle_id,
                runs: Vec::new(),
                inconclusive: Vec::new(),
                heldout: Vec::new(),
                bundle: None,
                verdict: None,
                skipped: Some(why),
            },
        };
        if evaluate::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
            reports.push(report);
            break;
        }
        reports.push(report);
    }
    folders::submit_all(opts, &mut reports)?;
    Ok(reports)
}

/// Why a submission's sample was not re-run (the others still are).
struct Skip(String);

impl From<Error> for Skip {
    fn from(e: Error) -> Skip {
        Skip(format!("{e:#}"))
    }
}

fn label(r: &QueuedRun) -> String {
    format!("{}/{}/{}", r.task, r.hint, r.attempt)
}

fn reproduce_one(
    api: &Api,
    key: &SecretKey,
    opts: &Options,
    cards: &BTreeMap<String, crate::task::TaskCard>,
    bundle_id: &str,
    runs: &[QueuedRun],
) -> Result<Report, Skip> {
    // The submission's own manifest, from its envelope: its agent, exactly as signed.
    let envelope = api.bytes(&format!("/api/v1/submissions/{bundle_id}/envelope"))?;
    let envelope = bundle::Envelope::parse(&envelope).map_err(|e| Skip(format!("its envelope: {e}")))?;
    let payload = envelope
        .payload(bundle::Limits::default().manifest)
        .map_err(|e| Skip(format!("its envelope: {e}")))?;
    if Digest::of(&payload).to_hex() != bundle_id {
        return Err(Skip(
            "the server's envelope is not of this bundle (its payload hashes otherwise)".into(),
        ));
    }
    let manifest = bundle::Manifest::parse(&payload).map_err(|e| Skip(format!("its manifest: {e}")))?;

    // The same task cards, or the verdicts would not compare.
    let mut chosen = Vec::new();
    for r in runs {
        chosen.push(cards.get(&r.task).ok_or_else(|| {
            Skip(format!("task `{}` has no card in {}", r.task, opts.evaluate.tasks_dir.display()))
        })?);
    }
    let benchmark = benchmark_for(cards, chosen.into_iter())?;
    if benchmark.task_set_digest != manifest.benchmark.task_set_digest {
        return Err(Skip(format!(
            "it was evaluated against the task set {}, these cards are {}: give --tasks with the same cards",
            manifest.benchmark.task_set_digest, benchmark.task_set_digest
        )));
    }

    let dir = opts.out.join(bundle_id);
    let mut runs = runs.to_vec();
    // A reproduction an earlier `reproduce` packed, whose answer never came, is submitted
    // first, as it is (the same bytes are stored once): re-running what it holds would
    // count a try twice.
    let left = dir.join(BUNDLE);
    let mut earlier = None;
    // One larger than the server takes (packed before its logs were cut to fit) is packed
    // again from the same results, which nothing re-runs.
    if fs::metadata(&left).is_ok_and(|m| m.len() > opts.bundle_limit.saturating_sub(FIT_MARGIN)) {
        fs::remove_file(&left).map_err(Error::io_at(&left))?;
    }
    if left.is_file() {
        match crate::submit::submit(&left, &opts.server)? {
            Verdict::Accepted { status, body } => {
                let kept = archive(&dir, &body)?;
                eprintln!(
                    "submission {bundle_id}: the reproduction an earlier run left was {} ({})",
                    if status == 201 { "accepted" } else { "stored already" },
                    kept.display()
                );
                runs = queue(api)?
                    .into_iter()
                    .filter(|r| r.bundle_id == bundle_id && r.patch.is_some())
                    .collect();
                earlier = Some((kept, Verdict::Accepted { status, body }));
            }
            Verdict::Refused { status, code, message } => {
                return Err(Skip(format!(
                    "the reproduction an earlier run left, {}, was refused ({status} {code}: {message}); move it away \
                     to re-run these runs afresh",
                    left.display()
                )));
            }
        }
    }
    if runs.is_empty() {
        let (bundle, verdict) = earlier.map(|(b, v)| (Some(b), Some(v))).unwrap_or_default();
        return Ok(Report {
            bundle_id: bundle_id.to_owned(),
            agent_id: manifest.agent.id.clone(),
            runs: Vec::new(),
            inconclusive: Vec::new(),
            heldout: Vec::new(),
            bundle,
            verdict,
            skipped: None,
        });
    }
    // An interrupted `reproduce` resumes the runs still waiting; what it left of others
    // (reproduced since, by it or another maintainer) goes.
    prune(&dir, &runs)?;

    // Each submitted patch, as the submission carries it, checked against its digest.
    let outputs = dir.join("outputs");
    for r in &runs {
        let digest = r.patch.as_deref().ok_or_else(|| Skip(format!("run {} has no patch", label(r))))?;
        let bytes = api.bytes(&format!("/artifacts/{digest}"))?;
        if Digest::of(&bytes).to_hex() != digest {
            return Err(Skip(format!(
                "the server served other bytes for run {}'s patch {digest}: refusing to re-run them",
                label(r)
            )));
        }
        let at = outputs.join(&r.task).join(r.hint.as_str()).join(r.attempt.to_string());
        fs::create_dir_all(&at).map_err(Error::io_at(&at))?;
        crate::run::write_atomically(&at.join("patch.diff"), &bytes)?;
    }

    let results = dir.join("results");
    let eval = evaluate::Options { outputs: outputs.clone(), out: results.clone(), ..opts.evaluate.clone() };
    evaluate::evaluate(&eval)?;

    // A re-run that ended infra_error shows nothing, and is submitted all the same as
    // one try (spec §4d): the server counts it, and after its stated number of tries the
    // run counts as not reproduced, so that no patch makes itself un-re-runnable.
    let mut done = Vec::new();
    let mut inconclusive = Vec::new();
    for r in &runs {
        let at = run_dir(&results, &r.task, r.hint, r.attempt);
        let mut record: RunRecord =
            serde_json::from_slice(&fs::read(at.join("run.json")).map_err(Error::io_at(&at))?)
                .map_err(|e| Skip(format!("{}: {e}", at.display())))?;
        // What the re-run says in public is the maintainers' word: an error type the
        // patch's output chose is stated as one of the runner's classes.
        if let Some(said) = &record.error_type
            && crate::error_class::public_error_class(said) != said
        {
            record.error_type = Some(crate::error_class::UNCLASSIFIED_ERROR.to_owned());
            let json = serde_json::to_vec_pretty(&record).expect("serializes");
            crate::run::write_atomically(&at.join("run.json"), &json)?;
        }
        if record.outcome == Outcome::InfraError {
            inconclusive.push((label(r), r.tries));
        } else {
            done.push((label(r), r.outcome, record.outcome));
        }
    }
    let (heldout, seen) = heldout_runs(opts, &dir, &results, &runs, &mut done, &mut inconclusive)?;
    let mut report = Report {
        bundle_id: bundle_id.to_owned(),
        agent_id: manifest.agent.id.clone(),
        runs: done,
        inconclusive,
        heldout: seen,
        bundle: None,
        verdict: None,
        skipped: None,
    };

    let (executor, hardware) = crate::hardware::of(&opts.evaluate);
    let reproduction = Reproduction { of: bundle_id.to_owned(), executor, hardware, heldout };
    let path = dir.join(BUNDLE);
    let created_at = benchmark::pack::timestamp(time::OffsetDateTime::now_utc());
    // What the re-runs printed, which their patches chose, may not make the reproduction
    // larger than the server takes (spec §7): their logs are cut until it fits.
    let limit = opts.bundle_limit.saturating_sub(FIT_MARGIN).max(FIT_MARGIN);
    let mut cap = bundle::Limits::default().artifact;
    loop {
        benchmark::pack::pack_as(
            &results,
            manifest.agent.clone(),
            Some(reproduction.clone()),
            &[key],
            &created_at,
            &path,
        )
        .map_err(|e| Skip(format!("packing {}: {}", results.display(), chain(&e))))?;
        let size = fs::metadata(&path).map_err(Error::io_at(&path))?.len();
        if size <= limit {
            break;
        }
        cap /= 4;
        if cap < MIN_LOG_CAP {
            let _ = fs::remove_file(&path);
            return Err(Skip(format!(
                "its reproduction is {size} bytes with every log cut to {MIN_LOG_CAP} bytes, more than a bundle may be \
                 ({limit}): its patches alone are too large"
            )));
        }
        let cut = cut_logs(&results, cap)?;
        eprintln!(
            "submission {bundle_id}: the reproduction was {size} bytes, over the {limit} a bundle may be: {cut} logs cut \
             to {cap} bytes"
        );
    }
    // Packed; submitted once every submission's re-runs are done ([`submit_all`]).
    report.bundle = Some(path);
    Ok(report)
}

/// Spec §4l: each run the server assigned a held-out variant, whose re-run above was
/// conclusive, is re-run once more on its task's codebase with the variant's files in
/// place, judged by the variant's check (from the maintainers' gold folder). What is
/// told of it is the variant's digest and the outcome; its logs stay in
/// `<out>/<bundle>/heldout/`. A held-out run that ends `infra_error` sets its run aside
/// whole (both re-runs), for the next `reproduce`.
fn heldout_runs(
    opts: &Options,
    dir: &std::path::Path,
    results: &std::path::Path,
    runs: &[QueuedRun],
    done: &mut Vec<(String, Outcome, Outcome)>,
    inconclusive: &mut Vec<(String, u32)>,
) -> Result<(Vec<HeldOut>, Vec<(String, String, Outcome)>), Skip> {
    let mut by_variant: BTreeMap<(String, String), Vec<&QueuedRun>> = BTreeMap::new();
    for r in runs {
        if let Some(v) = &r.heldout_variant
            && done.iter().any(|(l, _, _)| *l == label(r))
        {
            by_variant.entry((r.task.clone(), v.clone())).or_default().push(r);
        }
    }
    let (mut out, mut seen) = (Vec::new(), Vec::new());
    for ((task, digest), group) in by_variant {
        let gold = opts.evaluate.gold.as_deref().ok_or_else(|| {
            Skip(format!(
                "run {} is to be re-run on held-out variant {digest} of task {task}: give --gold DIR with {task}/{}/",
                label(group[0]),
                benchmark::heldout::DIR
            ))
        })?;
        let variant = benchmark::heldout::find(gold, &task, &digest)
            .map_err(|e| Skip(format!("the held-out variants of task {task}: {e}")))?
            .ok_or_else(|| {
                Skip(format!(
                    "the gold folder {} has no held-out variant {digest} of task {task} (`rexbench variants --gold {}`                      lists those it has)",
                    gold.display(),
                    gold.display()
                ))
            })?;
        let vdir = dir.join("heldout").join(&digest);
        let voutputs = vdir.join("outputs");
        for r in &group {
            let rel = std::path::Path::new(&r.task).join(r.hint.as_str()).join(r.attempt.to_string());
            let at = voutputs.join(&rel);
            fs::create_dir_all(&at).map_err(Error::io_at(&at))?;
            let patch = dir.join("outputs").join(&rel).join("patch.diff");
            let bytes = fs::read(&patch).map_err(Error::io_at(&patch))?;
            crate::run::write_atomically(&at.join("patch.diff"), &bytes)?;
        }
        let vresults = vdir.join("results");
        let heldout = evaluate::HeldOutRun { variant, codebase: vdir.join("codebase") };
        let eval = evaluate::Options {
            outputs: voutputs,
            out: vresults.clone(),
            heldout: Some(heldout),
            ..opts.evaluate.clone()
        };
        evaluate::evaluate(&eval)?;
        for r in group {
            let at = run_dir(&vresults, &r.task, r.hint, r.attempt);
            let record: RunRecord =
                serde_json::from_slice(&fs::read(at.join("run.json")).map_err(Error::io_at(&at))?)
                    .map_err(|e| Skip(format!("{}: {e}", at.display())))?;
            if record.outcome == Outcome::InfraError {
                // The run is a try (spec §4d): its re-run on the task is kept for the
                // maintainers beside the held-out one, and the bundle says infra_error.
                let main = run_dir(results, &r.task, r.hint, r.attempt);
                let json = main.join("run.json");
                let bytes = fs::read(&json).map_err(Error::io_at(&json))?;
                crate::run::write_atomically(&at.join("x-task-re-run.json"), &bytes)?;
                let mut tried: RunRecord =
                    serde_json::from_slice(&bytes).map_err(|e| Skip(format!("{}: {e}", json.display())))?;
                tried.outcome = Outcome::InfraError;
                tried.error_type = Some(crate::error_class::HELDOUT_FAILED.to_owned());
                tried.metrics.clear();
                crate::run::write_atomically(&json, &serde_json::to_vec_pretty(&tried).expect("serializes"))?;
                done.retain(|(l, _, _)| *l != label(r));
                inconclusive.push((format!("{} (its held-out re-run)", label(r)), r.tries));
                continue;
            }
            // The full outcome stays here, in the maintainers' results; one bit is told.
            seen.push((label(r), digest.clone(), record.outcome));
            out.push(HeldOut {
                task: r.task.clone(),
                hint: r.hint,
                attempt: r.attempt,
                variant: digest.clone(),
                generalised: record.outcome == Outcome::Success,
            });
        }
    }
    Ok((out, seen))
}

/// An error with its causes, as one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut words = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        words.push_str(&format!(": {c}"));
        cause = c.source();
    }
    words
}
