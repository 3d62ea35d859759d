//! The task cards in `tasks/`, their public checks, and the task-set digest.

use std::fs;
use std::path::Path;

use runner::check::RunOutput;
use runner::task::{load, load_all};
use runner::taskset::task_set_digest;

use crate::repo;

#[test]
fn all_twelve_cards_and_the_examples_load() {
    let cards = load_all(&repo().join("tasks")).unwrap();
    let ids: Vec<&str> = cards.keys().map(String::as_str).collect();
    let mut want: Vec<&str> = bundle::REXBENCH_TASKS.to_vec();
    want.extend(["csvstats", "wordfreq"]);
    want.sort();
    assert_eq!(ids, want);
    for id in bundle::REXBENCH_TASKS {
        let card = &cards[id];
        assert!(card.summary.is_some() && card.gold_run.is_some() && !card.papers.is_empty(), "{id}");
        assert!(card.dir.join("README.md").is_file(), "{id} has no README.md");
        // Only cogs and othello have public checks; the others' are private.
        assert_eq!(card.check.is_some(), id == "cogs" || id == "othello", "{id}");
        assert_eq!(card.public_expected.is_empty(), card.check.is_none(), "{id}");
        assert_eq!(card.evaluation.timeout_s, 43_200.0, "{id}: 12 hours");
    }
    assert_eq!(cards["cogs"].gold_run.as_ref().unwrap().runtime_minutes, Some(300.0));
    assert_eq!(cards["explain-then-translate"].gold_run.as_ref().unwrap().runtime, "<1m");
}

/// Runs a card's check on a working copy holding `files`.
fn check_files(task: &str, files: &[(String, String)]) -> runner::check::CheckReport {
    let card = load(&repo().join("tasks").join(task)).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let path = tmp.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
    let none = tmp.path().join("none");
    card.check.unwrap().run(RunOutput {
        task_dir: &card.dir,
        gold_dir: None,
        workdir: tmp.path(),
        stdout: &none,
        stderr: &none,
    })
}

fn cogs_results(text: &str) -> runner::check::CheckReport {
    check_files("cogs", &[("eval_results.txt".to_owned(), text.to_owned())])
}

#[test]
fn the_cogs_check_wants_the_line_exactly_once_with_the_exact_value() {
    let ok = cogs_results("epoch 30\nPRED ACC : 0.4562857142857143 (9582/21000)\ndone\n");
    assert!(ok.passed, "{}", ok.log);
    assert_eq!(ok.metrics["pred_acc"], 0.4562857142857143);
    let twice = "PRED ACC : 0.4562857142857143 (9582/21000)\nPRED ACC : 0.4562857142857143 (9582/21000)\n";
    assert!(!cogs_results(twice).passed);
    let off = cogs_results("PRED ACC : 0.4562857142857144 (9582/21000)\n");
    assert!(!off.passed);
    assert_eq!(off.metrics["pred_acc"], 0.4562857142857144);
    assert!(!cogs_results("PRED ACC : 0.4562857142857143 (9582/20000)\n").passed);
    assert!(!cogs_results("").passed);
    // The official evaluator searches anywhere in the file, not whole lines.
    assert!(cogs_results("test PRED ACC : 0.4562857142857143 (9582/21000) best\n").passed);
    let none = check_files("cogs", &[]);
    assert!(!none.passed && none.log.contains("cannot read eval_results.txt"), "{}", none.log);
}

#[test]
fn the_othello_check_reads_the_last_epoch_of_each_layer_within_its_tolerance() {
    let expected = [0.88211, 0.91916, 0.94318, 0.95633, 0.96581, 0.97177, 0.97266, 0.96966];
    let run = |offset: f64, bad_layer: usize| {
        let files: Vec<(String, String)> = expected
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let last = if i + 1 == bad_layer { e + 0.01 } else { e + offset };
                (
                    format!("ckpts/battery_othello/run/layer{}/epoch_metrics.txt", i + 1),
                    format!("epoch,test_acc\n1,0.5\n2,{last:.5}\n"),
                )
            })
            .collect();
        check_files("othello", &files)
    };
    let ok = run(0.0019, 0);
    assert!(ok.passed, "{}", ok.log);
    assert_eq!(ok.metrics.len(), 8);
    assert!(!run(-0.0021, 0).passed);
    let one_off = run(0.0, 5);
    assert!(!one_off.passed);
    assert!(
        one_off.log.contains("layer5_test_acc: read 0.97581, expected 0.96581 ± 0.002: FAIL"),
        "{}",
        one_off.log
    );
    let empty = check_files("othello", &[]);
    assert!(!empty.passed && empty.log.contains("cannot list ckpts/battery_othello"), "{}", empty.log);
}

fn digest_of(dir: &Path) -> bundle::Digest {
    let cards = load_all(dir).unwrap();
    task_set_digest(cards.values().filter(|c| !c.dir.starts_with(dir.join("examples")))).unwrap()
}

#[test]
fn the_task_set_digest_changes_with_what_evaluation_reads_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = tmp.path().join("tasks");
    for id in ["cogs", "othello"] {
        fs::create_dir_all(tasks.join(id)).unwrap();
        for f in ["task.toml", "README.md"] {
            fs::copy(repo().join("tasks").join(id).join(f), tasks.join(id).join(f)).unwrap();
        }
    }
    let base = digest_of(&tasks);
    assert_eq!(digest_of(&tasks), base, "deterministic");

    fs::write(tasks.join("cogs/README.md"), "reworded").unwrap();
    assert_eq!(digest_of(&tasks), base, "a README does not affect evaluation");

    // Who may read outputs is not how a run is judged: publishing a task's outputs, or
    // making them private again, keeps the digest. A line that only looks like it (in a
    // table, or another key) does not.
    let card = fs::read_to_string(tasks.join("cogs/task.toml")).unwrap();
    for outputs in ["public", "private"] {
        let toggled = card.replace("outputs = \"private\"\n", &format!("outputs = \"{outputs}\"\n"));
        fs::write(tasks.join("cogs/task.toml"), &toggled).unwrap();
        assert_eq!(digest_of(&tasks), base, "outputs = {outputs}");
    }
    fs::write(tasks.join("cogs/task.toml"), card.replace("outputs = \"private\"\n", "")).unwrap();
    assert_eq!(digest_of(&tasks), base, "a card that leaves outputs to the default");
    fs::write(
        tasks.join("cogs/task.toml"),
        card.replace("outputs = \"private\"\n", "# outputs = \"public\"\n"),
    )
    .unwrap();
    assert_ne!(digest_of(&tasks), base, "any other line is hashed, a comment that names it too");
    fs::write(tasks.join("cogs/task.toml"), &card).unwrap();
    assert_eq!(digest_of(&tasks), base);

    let card = fs::read_to_string(tasks.join("othello/task.toml")).unwrap();
    fs::write(tasks.join("othello/task.toml"), card.replace("tolerance = 0.002", "tolerance = 0.003"))
        .unwrap();
    let changed = digest_of(&tasks);
    assert_ne!(changed, base, "a check's tolerance is part of the task set");

    fs::write(tasks.join("othello/check.py"), "print(1)").unwrap();
    assert_ne!(digest_of(&tasks), changed, "so is any file beside the card");
}

#[test]
fn cards_that_name_the_gold_folder_or_unknown_public_values_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mytask");
    fs::create_dir_all(&dir).unwrap();
    let card = |check: &str| {
        fs::write(dir.join("task.toml"), format!("id = \"mytask\"\nname = \"Mine\"\n{check}")).unwrap();
        load(&dir).map(drop).unwrap_err().to_string()
    };
    let err = card("[check.external]\ncommand = [\"sh\", \"{gold}/evaluate.sh\"]\n");
    assert!(err.contains("a card's check cannot name `{gold}`"), "{err}");
    let err = card(
        "public_expected = [\"acc\"]\n[[check.metrics]]\nname = \"accuracy\"\nregex = '(\\d+)'\nequals = 1.0\n",
    );
    assert!(err.contains("public_expected names `acc`, which the card's check does not report"), "{err}");
}
