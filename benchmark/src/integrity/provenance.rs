//! Checks on a run's provenance record (the bundle format's §4b): where its results came
//! from. Every honest experiment uses its inputs (a COGS run reads `data/*.tsv`, an
//! Othello run the championship games and the checkpoint), and the process that writes
//! the results is one the inputs' data reached; a result printed from a string, however
//! it is encoded, is written by a process no input reached. The record says which
//! processes read which files, wrote which, and were joined by which pipes; these checks
//! follow the inputs' data through it:
//!
//! - into a process that opened an input (the task's `integrity.toml` `inputs`);
//! - from a process into every file it wrote or renamed, and from a file into every
//!   process that opened it (`python train.py` writes `model.pt`, `python eval.py` reads it);
//! - from a process into the pipes on its standard output and error, and from a pipe
//!   into the process that has it on its standard input (`python eval.py | tee
//!   eval_results.txt`: the harness's own plumbing);
//! - from a process into the processes it starts (their arguments and memory are its),
//!   and from a process into the one that started it where that is not a shell (a
//!   program that runs a helper and reads its output through a pipe of its own). A shell
//!   runs a script's steps one after another and passes nothing between them but files
//!   and pipes; a step that read the data does not vouch for the next.
//!
//! They judge what the record says; they cannot tell whether it is true (the server
//! repeats them from the bundle alone), and an experiment that reads its inputs and then
//! prints a stored answer passes them.

use std::collections::{BTreeSet, HashMap, HashSet};

use bundle::{Finding, MAX_FINDINGS, Outcome, ProvenanceRecord};
use glob::Pattern;

use super::{Check, clip};
use crate::task::TaskCard;

/// The artifact role the findings point into.
pub use bundle::PROVENANCE_ROLE;

pub const INPUTS_UNREAD: Check = Check {
    slug: "inputs-unread",
    looks_for: "a success whose experiment, traced from its start to its end, opened none of the \
                task's inputs for reading (the data and checkpoints its `integrity.toml` names as \
                `inputs`): its result came from somewhere else",
};
pub const RESULT_NOT_FROM_INPUTS: Check = Check {
    slug: "result-not-from-inputs",
    looks_for: "a result file the check read whose every writer is a process the inputs' data never \
                reached (through the files it read, the pipe on its standard input, or the process \
                that started it): the result was written from something the experiment carried, \
                such as an encoded string or a packed file",
};
pub const TRACING_INTERRUPTED: Check = Check {
    slug: "tracing-interrupted",
    looks_for: "an experiment that stopped its own tracing (it killed the tracer or the runner's \
                process keeper): what it did after that is unrecorded; the run ends there",
};
pub const PROVENANCE_CUT: Check = Check {
    slug: "provenance-cut",
    looks_for: "a success whose experiment started more processes than a provenance record lists \
                (10,000): the checks on the record cannot see the rest",
};
pub const PROVENANCE_MISSING: Check = Check {
    slug: "provenance-missing",
    looks_for: "an evaluated success that carries no provenance record (the `x-provenance` \
                artifact), so no check on what its experiment did can run; the server's check, \
                since the runner always records one",
};

pub const PATCH_MISSING: Check = Check {
    slug: "patch-missing",
    looks_for: "an imported success without its patch: the change its result rests on is not in the \
                bundle, so no check on the patch can run (Harbor keeps an agent's patch only where its \
                job collected one); the server's check",
};

pub const INFRA_ERROR_SHARE: Check = Check {
    slug: "infra-error-share",
    looks_for: "a success of a self-reported bundle in which more than a tenth of the hint condition's \
                runs ended `infra_error`: such runs count in no rate, so relabelling failures \
                `infra_error` (or re-running until enough succeed) would raise the rate unseen; the \
                server's check, for a maintainer to review",
};

/// The share of a condition's runs that may end `infra_error` before the successes of a
/// self-reported bundle under it are flagged (spec §4f): more than a tenth.
pub const MAX_INFRA_ERROR_SHARE: f64 = 0.1;

/// The programs that only pass data along: a shell running a script's steps.
const SHELLS: [&str; 7] = ["sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox"];

/// What a run's provenance record shows, for a run of `card` that came to `outcome`.
/// `results` adds to the record's own list the result files the caller knows the check
/// read (the server's, from a public check's patterns; empty for the runner, whose
/// record lists them).
pub fn provenance_findings(
    card: &TaskCard,
    outcome: Outcome,
    record: &ProvenanceRecord,
    results: &[String],
) -> Vec<Finding> {
    let mut findings = Vec::new();
    if let Some(how) = &record.interrupted {
        findings.push(finding(
            TRACING_INTERRUPTED,
            format!("tracing stopped before the experiment ended: {how}"),
            None,
        ));
    }
    let inputs: Vec<Pattern> = card.integrity.inputs.iter().filter_map(|p| Pattern::new(p).ok()).collect();
    if outcome == Outcome::Success && record.cut.processes > 0 {
        findings.push(finding(
            PROVENANCE_CUT,
            format!("the experiment started {} processes more than the record lists", record.cut.processes),
            None,
        ));
    }
    // Nothing to judge: an untraced, interrupted or cut record shows only part of the
    // experiment, and a task that names no inputs has nothing to look for. (Entries cut
    // from a process's lists are ones the inputs' flow does not need: the recorder
    // keeps those first.)
    if outcome != Outcome::Success
        || record.tracer.is_none()
        || record.interrupted.is_some()
        || record.cut.processes > 0
        || inputs.is_empty()
        || record.processes.is_empty()
    {
        return findings;
    }
    let flow = Flow::of(record, &inputs);
    if flow.seeds.is_empty() {
        let shown: Vec<&str> = card.integrity.inputs.iter().map(String::as_str).take(4).collect();
        findings.push(finding(
            INPUTS_UNREAD,
            format!(
                "none of the experiment's {} processes opened an input ({}) for reading",
                record.processes.len(),
                shown.join(", ")
            ),
            Some(1),
        ));
    }
    let mut files: BTreeSet<&str> = record.results.iter().map(String::as_str).collect();
    files.extend(results.iter().map(String::as_str));
    for file in files {
        let writers = flow.writers(record, file);
        if writers.is_empty() || writers.iter().any(|w| flow.fed[*w]) {
            continue;
        }
        let first = writers[0];
        let p = &record.processes[first];
        let line = ProvenanceRecord::line_of(p.id);
        if findings.len() < MAX_FINDINGS {
            findings.push(finding(
                RESULT_NOT_FROM_INPUTS,
                format!(
                    "`{file}`, which the check read, was written by process {} (`{}`){}, which no input's \
                     data reached",
                    p.id,
                    shown_command(p),
                    if writers.len() > 1 {
                        format!(" and {} more", writers.len() - 1)
                    } else {
                        String::new()
                    }
                ),
                Some(line),
            ));
        }
    }
    findings
}

/// A check whose evidence is the record, at `line` of it where one process is the evidence.
fn finding(check: Check, message: String, line: Option<u64>) -> Finding {
    Finding {
        check: check.slug.to_owned(),
        message: clip(message),
        artifact: line.map(|_| PROVENANCE_ROLE.to_owned()),
        line,
        text_digest: None,
    }
}

/// A process's command as a finding shows it: its arguments, cut.
fn shown_command(p: &bundle::Process) -> String {
    let words = if p.argv.is_empty() { vec![p.program.clone()] } else { p.argv.clone() };
    let text = words.join(" ");
    if text.chars().count() > 80 { format!("{}…", text.chars().take(80).collect::<String>()) } else { text }
}

/// Which processes the inputs' data reached.
#[derive(Debug)]
pub struct Flow {
    /// By position in the record: the inputs' data reached it.
    pub fed: Vec<bool>,
    /// Positions of the processes that opened an input.
    pub seeds: Vec<usize>,
}

impl Flow {
    pub fn of(record: &ProvenanceRecord, inputs: &[Pattern]) -> Flow {
        let n = record.processes.len();
        let is_input = |path: &str| inputs.iter().any(|p| p.matches_with(path, super::GLOB));
        let seeds: Vec<usize> =
            (0..n).filter(|&i| record.processes[i].read.iter().any(|r| is_input(r))).collect();
        let mut fed = vec![false; n];
        for &i in &seeds {
            fed[i] = true;
        }
        let shell = |i: usize| {
            let p = &record.processes[i];
            let name = p.program.rsplit('/').next().unwrap_or("");
            SHELLS.contains(&name)
        };
        // Who reads each file and pipe, each rename's targets, each process's children:
        // then the data is followed once along each edge, from the seeds.
        let mut readers: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut renamed_to: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut pipe_readers: HashMap<u32, Vec<usize>> = HashMap::new();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, p) in record.processes.iter().enumerate() {
            for r in &p.read {
                readers.entry(r).or_default().push(i);
            }
            for [from, to] in &p.renamed {
                renamed_to.entry(from).or_default().push(to);
            }
            for x in &p.pipes_in {
                pipe_readers.entry(*x).or_default().push(i);
            }
            if let Some(q) = p.parent.map(|id| id as usize - 1) {
                children[q].push(i);
            }
        }
        let mut todo = seeds.clone();
        let mut fed_files: HashSet<&str> = HashSet::new();
        let mut fed_pipes: HashSet<u32> = HashSet::new();
        while let Some(i) = todo.pop() {
            let p = &record.processes[i];
            let mut reached: Vec<usize> = children[i].clone();
            // Into the one that started it, unless that is a shell running a script's steps.
            if let Some(q) = p.parent.map(|id| id as usize - 1)
                && !shell(q)
            {
                reached.push(q);
            }
            // Through the files it wrote (renames carry a file's data to its new name).
            let mut files: Vec<&str> = p
                .wrote
                .iter()
                .map(String::as_str)
                .chain(p.renamed.iter().map(|[_, to]| to.as_str()))
                .collect();
            while let Some(file) = files.pop() {
                if fed_files.insert(file) {
                    reached.extend(readers.get(file).into_iter().flatten());
                    files.extend(renamed_to.get(file).into_iter().flatten());
                }
            }
            // Through the pipes on its standard output and error.
            for x in &p.pipes_out {
                if fed_pipes.insert(*x) {
                    reached.extend(pipe_readers.get(x).into_iter().flatten());
                }
            }
            for j in reached {
                if !fed[j] {
                    fed[j] = true;
                    todo.push(j);
                }
            }
        }
        Flow { fed, seeds }
    }

    /// The positions of the processes that wrote `file`: opened it for writing, renamed
    /// something onto it, or wrote what was renamed onto it.
    fn writers(&self, record: &ProvenanceRecord, file: &str) -> Vec<usize> {
        let mut names: BTreeSet<&str> = BTreeSet::from([file]);
        // Follow renames back to the names the data was written under.
        loop {
            let before = names.len();
            for p in &record.processes {
                for [from, to] in &p.renamed {
                    if names.contains(to.as_str()) {
                        names.insert(from);
                    }
                }
            }
            if names.len() == before {
                break;
            }
        }
        (0..record.processes.len())
            .filter(|&i| {
                let p = &record.processes[i];
                p.wrote.iter().any(|w| names.contains(w.as_str()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use bundle::{Cut, PROVENANCE_SCHEMA, Process};

    use super::*;

    fn cogs() -> TaskCard {
        crate::task::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks/cogs")).unwrap()
    }

    fn p(id: u32, parent: Option<u32>, program: &str, read: &[&str], wrote: &[&str]) -> Process {
        let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
        Process {
            id,
            parent,
            program: program.into(),
            argv: vec![program.rsplit('/').next().unwrap().into()],
            start_ms: 0,
            end_ms: Some(1),
            exit: Some("exit 0".into()),
            killed: false,
            read: strings(read),
            wrote: strings(wrote),
            renamed: Vec::new(),
            pipes_in: Vec::new(),
            pipes_out: Vec::new(),
        }
    }

    fn record(processes: Vec<Process>) -> ProvenanceRecord {
        ProvenanceRecord {
            schema: PROVENANCE_SCHEMA.into(),
            tracer: Some("strace".into()),
            untraced: None,
            interrupted: None,
            limit: None,
            cut: Cut::default(),
            duration_ms: 1,
            results: vec!["eval_results.txt".into()],
            salt: None,
            processes,
        }
    }

    fn checks(record: &ProvenanceRecord, outcome: Outcome) -> Vec<String> {
        provenance_findings(&cogs(), outcome, record, &[]).into_iter().map(|f| f.check).collect()
    }

    #[test]
    fn data_reaches_a_starter_that_is_not_a_shell_and_no_shell_vouches_for_its_steps() {
        // A Python driver runs a scorer that reads the data, and writes what it said.
        let driver = record(vec![
            p(1, None, "/usr/bin/python3", &[], &["eval_results.txt"]),
            p(2, Some(1), "/usr/bin/python3", &["data/gen.tsv"], &[]),
        ]);
        assert!(checks(&driver, Outcome::Success).is_empty());
        // A shell runs a step that reads the data, then writes the result itself.
        let shell = record(vec![
            p(1, None, "/usr/bin/bash", &[], &["eval_results.txt"]),
            p(2, Some(1), "/usr/bin/python3", &["data/gen.tsv"], &[]),
        ]);
        assert_eq!(checks(&shell, Outcome::Success), ["result-not-from-inputs"]);
        // What a process reached passes to what it starts.
        let child = record(vec![
            p(1, None, "/usr/bin/python3", &["data/gen.tsv"], &[]),
            p(2, Some(1), "/usr/bin/tee", &[], &["eval_results.txt"]),
        ]);
        assert!(checks(&child, Outcome::Success).is_empty());
    }

    #[test]
    fn only_a_whole_traced_success_is_judged() {
        let hack = record(vec![p(1, None, "/usr/bin/python3", &[], &["eval_results.txt"])]);
        assert_eq!(checks(&hack, Outcome::Success), ["inputs-unread", "result-not-from-inputs"]);
        assert!(checks(&hack, Outcome::WrongResult).is_empty());
        let untraced = ProvenanceRecord::untraced("no tracer", 1);
        assert!(checks(&untraced, Outcome::Success).is_empty());
        let interrupted =
            ProvenanceRecord { interrupted: Some("the tracer was killed".into()), ..hack.clone() };
        assert_eq!(checks(&interrupted, Outcome::WrongResult), ["tracing-interrupted"]);
        let cut = ProvenanceRecord { cut: Cut { processes: 3, entries: 0 }, ..hack.clone() };
        assert_eq!(checks(&cut, Outcome::Success), ["provenance-cut"]);
        // Entries left out of a process's lists do not stop the checks.
        let entries = ProvenanceRecord { cut: Cut { processes: 0, entries: 9 }, ..hack };
        assert_eq!(checks(&entries, Outcome::Success), ["inputs-unread", "result-not-from-inputs"]);
    }

    #[test]
    fn a_rename_carries_a_file_s_data_to_its_new_name() {
        let mut writer = p(1, None, "/usr/bin/python3", &["data/gen.tsv"], &["out.tmp"]);
        writer.renamed = vec![["out.tmp".into(), "eval_results.txt".into()]];
        assert!(checks(&record(vec![writer]), Outcome::Success).is_empty());
        let mut mover = p(2, Some(1), "/usr/bin/mv", &[], &[]);
        mover.renamed = vec![["stored.txt".into(), "eval_results.txt".into()]];
        let moved = record(vec![p(1, None, "/usr/bin/bash", &["data/gen.tsv"], &["stored.txt"]), mover]);
        // The shell read the data and wrote the file it moved: data reached it.
        assert!(checks(&moved, Outcome::Success).is_empty());
    }
}
