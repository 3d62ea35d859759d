//! `rexbench import-published` reproduces the paper's Table 5 from its Tables 11–24.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use bundle::{Hint, ProvenanceKind, Verifier};

use crate::{repo, runner, stderr};

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[test]
fn the_published_bundles_reproduce_table_5() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    assert!(runner(&["keygen", "--out", "k"], dir).status.success());
    let tasks = repo().join("tasks");
    let out = runner(
        &["import-published", "--key", "k.pem", "--out", "bundles", "--tasks", tasks.to_str().unwrap()],
        dir,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // The paper's inconsistency is said on the terminal.
    let warnings = stderr(&out);
    assert!(
        warnings.contains("warning: openhands-claude-4.5-opus: the paper is inconsistent: implicit-ins with no hints has final success 0.60 above execution success 0.00"),
        "{warnings}"
    );
    assert_eq!(warnings.lines().count(), 2, "{warnings}");

    let key = bundle::PublicKey::from_pem(&fs::read_to_string(dir.join("k.pub.pem")).unwrap()).unwrap();
    let verifier = Verifier::new(vec![key], bundle::REXBENCH_TASKS);
    let data = runner::published::data();
    assert_eq!(data.agents.len(), 14);
    let mut exec_mismatches = BTreeSet::new();
    for agent in &data.agents {
        let bytes = fs::read(dir.join("bundles").join(format!("{}.rexb.tar.gz", agent.id))).unwrap();
        let v = verifier.verify(bytes.as_slice()).unwrap();
        let m = &v.manifest;
        assert_eq!(m.provenance.kind, ProvenanceKind::Published);
        assert!(m.provenance.source.as_ref().unwrap().contains(&agent.table));
        assert_eq!(m.runs.len(), 12 * 3 * 5);
        assert!(m.artifacts.is_empty());

        // Per hint condition: (successes, executed, runs), and file recall per cell.
        let mut totals: BTreeMap<Hint, (u32, u32, u32)> = BTreeMap::new();
        let mut recall: BTreeMap<(Hint, &str), Vec<f64>> = BTreeMap::new();
        for run in &m.runs {
            let t = totals.entry(run.hint).or_default();
            t.0 += u32::from(run.outcome.succeeded().unwrap());
            t.1 += u32::from(run.outcome.executed().unwrap());
            t.2 += 1;
            recall.entry((run.hint, run.task.as_str())).or_default().push(run.file_recall.unwrap());
        }
        for (hint, (succ, exec, n)) in totals {
            let table5 = data.table5[&agent.id][&hint];
            assert_eq!(n, 60);
            assert_eq!(
                round2(f64::from(succ) / 60.0),
                table5.final_success,
                "{} {hint}: final success",
                agent.id
            );
            if round2(f64::from(exec) / 60.0) != table5.execution_success {
                exec_mismatches.insert((agent.id.clone(), hint));
            }
        }
        for ((hint, task), values) in recall {
            let cell = agent.results[&hint][task].file_recall;
            assert!(values.iter().all(|r| *r == cell), "{} {hint} {task}", agent.id);
        }
    }
    // Execution success reproduces Table 5 everywhere but the two cells where the paper
    // prints more final successes than executions, which a run cannot have.
    let expected: BTreeSet<(String, Hint)> =
        [Hint::None, Hint::Hints].into_iter().map(|h| ("openhands-claude-4.5-opus".to_owned(), h)).collect();
    assert_eq!(exec_mismatches, expected);

    // The headline numbers of the paper's newest agent.
    let t5 = &data.table5["openhands-claude-4.5-opus"];
    assert_eq!(
        [t5[&Hint::None].final_success, t5[&Hint::Hints].final_success, t5[&Hint::Detailed].final_success],
        [0.42, 0.62, 0.50]
    );
}

/// Without `--tasks` the cards built into the binary give the task-set digest: the same
/// one as the repository's cards (they are those cards).
#[test]
fn the_built_in_cards_serve_when_no_tasks_are_given() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    assert!(runner(&["keygen", "--out", "k"], dir).status.success());
    let tasks = repo().join("tasks");
    let given = runner(
        &["import-published", "--key", "k.pem", "--out", "given", "--tasks", tasks.to_str().unwrap()],
        dir,
    );
    assert!(given.status.success(), "{}", stderr(&given));
    let built_in = runner(&["import-published", "--key", "k.pem", "--out", "built-in"], dir);
    assert!(built_in.status.success(), "{}", stderr(&built_in));
    let digest = |folder: &str| {
        let key = bundle::PublicKey::from_pem(&fs::read_to_string(dir.join("k.pub.pem")).unwrap()).unwrap();
        let bytes = fs::read(dir.join(folder).join("aider-o1.rexb.tar.gz")).unwrap();
        let v = Verifier::new(vec![key], bundle::REXBENCH_TASKS).verify(bytes.as_slice()).unwrap();
        v.manifest.benchmark.task_set_digest
    };
    assert_eq!(digest("given"), digest("built-in"));
}
