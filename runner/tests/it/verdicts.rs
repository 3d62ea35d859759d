//! Our verdicts against RExBench's official evaluators: on every case below, `rexbench evaluate`
//! (through the real cards, commands and checks) calls a run a success exactly when the
//! official evaluator gives it reward 1.
//!
//! How each official verdict was obtained (outside the project; no official code is in
//! it): the cases were exported with
//! `REXBENCH_PARITY_EXPORT=/tmp/parity cargo nextest run -p rexbench-runner verdicts::`,
//! which writes each case's results as the harness leaves them (`cogs/<case>/eval_results.txt`,
//! `othello/<case>/ckpts/…`), then the evaluators of `nedwards99/rexbench-harbor` at commit
//! eec11c0 (`eval_scripts/<task>/numerical_eval.py`, Python 3.11.7, pandas 3.1.1, numpy 2.4.6)
//! were run on each as that harness's `test.sh` runs them:
//! `python numerical_eval.py /tmp/parity/cogs/<case>/eval_results.txt` and
//! `python numerical_eval.py /tmp/parity/othello/<case>/ckpts`; exit status 0 is reward 1.
//! `official` below records that verdict and what the script printed last (or the
//! exception it raised). Cases where the experiment itself fails take `test.sh`'s rule:
//! when `run_docker.sh` fails, the reward is 0 without evaluation.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use base64::Engine as _;

use crate::{repo, runner, stderr, stdout};

/// One synthetic experiment output and the official verdict on it.
struct Case {
    name: &'static str,
    /// What the experiment writes, relative to the codebase: a file's bytes, or `None`
    /// for an empty folder. Written in this order.
    writes: Vec<(String, Option<Vec<u8>>)>,
    /// Files the agent's patch itself adds besides the experiment script.
    shipped: Vec<(String, String)>,
    /// The experiment's exit status.
    exit: u8,
    official: Official,
}

enum Official {
    /// Reward 1 or 0, and what the official script printed.
    Verdict(bool, &'static str),
    /// Decided by which folder `os.listdir` gives first: (folder, reward). The official
    /// script listed run_a first on the exported case and printed
    /// `{'all_layers_in_range': True}`; with run_a removed (so run_b is first) it printed
    /// `Warning: layer_3 value 0.9 is outside the range …` and `{… False}`.
    ByFirstFolder(&'static str, &'static [(&'static str, bool)]),
}

fn text(path: &str, content: &str) -> (String, Option<Vec<u8>>) {
    (path.to_owned(), Some(content.as_bytes().to_vec()))
}

fn folder(path: &str) -> (String, Option<Vec<u8>>) {
    (path.to_owned(), None)
}

fn case(name: &'static str, writes: Vec<(String, Option<Vec<u8>>)>, official: Official) -> Case {
    Case { name, writes, shipped: Vec::new(), exit: 0, official }
}

const PASS: bool = true;
const FAIL: bool = false;

// ---------------------------------------------------------------- cogs

const GOLD_LINE: &str = "PRED ACC : 0.4562857142857143 (9582/21000)";

fn cogs(name: &'static str, output: &[u8], official: bool, said: &'static str) -> Case {
    Case {
        name,
        writes: vec![("stdout".to_owned(), Some(output.to_vec()))],
        shipped: Vec::new(),
        exit: 0,
        official: Official::Verdict(official, said),
    }
}

fn cogs_cases() -> Vec<Case> {
    let line = |s: &str| format!("Epoch 30 finished\n{s}\nSaved.\n").into_bytes();
    let mut bad_utf8 = vec![0xff, b'\n'];
    bad_utf8.extend(line(GOLD_LINE));
    let mut cases = vec![
        cogs("exact", &line(GOLD_LINE), PASS, "{'right_range': True}"),
        cogs(
            "text_before_and_after",
            &line(&format!("test: {GOLD_LINE} (best epoch)")),
            PASS,
            "{'right_range': True}",
        ),
        cogs("two_result_lines", &line(&format!("{GOLD_LINE}\n{GOLD_LINE}")), FAIL, "{'right_range': False}"),
        cogs(
            "two_results_on_one_line",
            &line(&format!("{GOLD_LINE} {GOLD_LINE}")),
            FAIL,
            "{'right_range': False}",
        ),
        cogs(
            "scientific_notation",
            &line("PRED ACC : 4.562857142857143e-01 (9582/21000)"),
            PASS,
            "{'right_range': True}",
        ),
        cogs(
            "extra_spaces",
            &line("PRED ACC :  0.4562857142857143  (9582/21000)"),
            PASS,
            "{'right_range': True}",
        ),
        cogs(
            "underscores_in_the_number",
            &line("PRED ACC : 0.456_285_714_285_714_3 (9582/21000)"),
            PASS,
            "{'right_range': True}",
        ),
        cogs(
            "leading_zero",
            &line("PRED ACC : 00.4562857142857143 (9582/21000)"),
            PASS,
            "{'right_range': True}",
        ),
        cogs(
            "one_ulp_off",
            &line("PRED ACC : 0.4562857142857144 (9582/21000)"),
            FAIL,
            "{'right_range': False}",
        ),
        cogs("nan", &line("PRED ACC : nan (9582/21000)"), FAIL, "{'right_range': False}"),
        cogs(
            "text_inside_the_capture",
            &line("PRED ACC : 0.4562857142857143 acc (9582/21000)"),
            FAIL,
            "{'right_range': False}",
        ),
        cogs(
            "other_denominator",
            &line("PRED ACC : 0.4562857142857143 (9582/20000)"),
            FAIL,
            "{'right_range': False}",
        ),
        cogs("no_result_line", &line("PRED ACCURACY 0.4562857142857143"), FAIL, "{'right_range': False}"),
        cogs("empty_output", b"", FAIL, "{'right_range': False}"),
        cogs("windows_line_endings", format!("{GOLD_LINE}\r\n").as_bytes(), PASS, "{'right_range': True}"),
        cogs("invalid_utf8", &bad_utf8, FAIL, "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff"),
    ];
    let mut failed =
        cogs("experiment_fails_after_the_result", &line(GOLD_LINE), FAIL, "test.sh: run_docker.sh failed");
    failed.exit = 1;
    cases.push(failed);
    cases
}

// ---------------------------------------------------------------- othello

const LAYERS: [f64; 8] = [0.88211, 0.91916, 0.94318, 0.95633, 0.96581, 0.97177, 0.97266, 0.96966];

fn metrics_csv(last: &str) -> String {
    format!("epoch,train_loss,test_acc\n0,1.2,0.51\n1,0.8,0.7\n2,0.5,{last}\n")
}

/// A run folder with eight good layers, `change` applied to each (layer, csv text).
fn run_folder(run: &str, change: impl Fn(usize, String) -> Option<String>) -> Vec<(String, Option<Vec<u8>>)> {
    let mut out = vec![folder(&format!("ckpts/battery_othello/{run}"))];
    for (i, gold) in LAYERS.iter().enumerate() {
        let layer = i + 1;
        let dir = format!("ckpts/battery_othello/{run}/layer{layer}");
        out.push(folder(&dir));
        if let Some(csv) = change(layer, metrics_csv(&gold.to_string())) {
            out.push(text(&format!("{dir}/epoch_metrics.txt"), &csv));
        }
    }
    out
}

/// The same CSV with a column before and after the others.
fn with_columns(csv: &str) -> String {
    let mut lines = csv.lines();
    let mut out = format!("run,{},lr\n", lines.next().unwrap());
    for l in lines {
        out.push_str(&format!("7,{l},0.001\n"));
    }
    out
}

fn good(run: &str) -> Vec<(String, Option<Vec<u8>>)> {
    run_folder(run, |_, csv| Some(csv))
}

fn othello_cases() -> Vec<Case> {
    let all_in = "{'all_layers_in_range': True}";
    let not_all = "{'all_layers_in_range': False}";
    let only = |layer: usize, f: fn(String) -> Option<String>| {
        move |l: usize, csv: String| if l == layer { f(csv) } else { Some(csv) }
    };
    let numbered = |numbers: [u32; 8]| {
        let mut out = vec![folder("ckpts/battery_othello/run")];
        for (gold, n) in LAYERS.iter().zip(numbers) {
            out.push(text(
                &format!("ckpts/battery_othello/run/layer{n}/epoch_metrics.txt"),
                &metrics_csv(&gold.to_string()),
            ));
        }
        out
    };
    let mut stale =
        case("stale_results_in_the_patch_are_removed", good("run"), Official::Verdict(PASS, all_in));
    stale.shipped = vec![(
        "ckpts/battery_othello/agent_leftover/layer1/epoch_metrics.txt".to_owned(),
        metrics_csv("0.1"),
    )];
    let mut failed = case(
        "experiment_fails_after_writing_results",
        good("run"),
        Official::Verdict(FAIL, "test.sh: run_docker.sh failed"),
    );
    failed.exit = 1;
    let mut two = good("run_a");
    two.extend(run_folder("run_b", only(3, |c| Some(c.replace("0.94318", "0.9")))));
    vec![
        case("eight_good_layers", good("run"), Official::Verdict(PASS, all_in)),
        case(
            "a_layer_file_is_missing",
            run_folder("run", |l, c| (l != 5).then_some(c)),
            Official::Verdict(FAIL, not_all),
        ),
        case(
            "seven_layers_are_judged_on_seven",
            good("run").into_iter().filter(|(p, _)| !p.contains("layer8")).collect(),
            Official::Verdict(PASS, all_in),
        ),
        case(
            "a_run_folder_without_layers_passes",
            vec![folder("ckpts/battery_othello/run")],
            Official::Verdict(PASS, all_in),
        ),
        case(
            "nine_layers_fail",
            {
                let mut v = good("run");
                v.push(text("ckpts/battery_othello/run/layer9/epoch_metrics.txt", &metrics_csv("0.97")));
                v
            },
            Official::Verdict(FAIL, "KeyError: 'layer_9'"),
        ),
        case(
            "layers_ordered_by_their_number",
            numbered([2, 4, 6, 8, 10, 12, 14, 16]),
            Official::Verdict(PASS, all_in),
        ),
        case(
            "a_stray_layer_file_counts_as_layer_one",
            {
                let mut v = good("run");
                v.push(text("ckpts/battery_othello/run/layer_notes.txt", "notes"));
                v
            },
            Official::Verdict(FAIL, "KeyError: 'layer_9'"),
        ),
        case(
            "extra_columns",
            run_folder("run", |_, c| Some(with_columns(&c))),
            Official::Verdict(PASS, all_in),
        ),
        case(
            "extra_rows_the_last_counts",
            run_folder("run", |_, c| {
                Some(c.replacen("0,1.2,0.51\n", "0,1.2,0.51\n0,1.1,0.99\n0,1.0,0.2\n", 1))
            }),
            Official::Verdict(PASS, all_in),
        ),
        case(
            "a_later_row_is_not_the_last",
            run_folder("run", |l, c| Some(if l == 2 { format!("{c}3,0.4,0.5\n") } else { c })),
            Official::Verdict(FAIL, not_all),
        ),
        case(
            "nan_in_the_last_row",
            run_folder("run", only(6, |c| Some(c.replace("0.97177", "nan")))),
            Official::Verdict(FAIL, not_all),
        ),
        case(
            "an_empty_layer_file",
            run_folder("run", only(3, |_| Some(String::new()))),
            Official::Verdict(FAIL, "pandas.errors.EmptyDataError: No columns to parse from file"),
        ),
        case(
            "a_header_without_rows",
            run_folder("run", only(3, |_| Some("epoch,train_loss,test_acc\n".to_owned()))),
            Official::Verdict(FAIL, "IndexError: single positional indexer is out-of-bounds"),
        ),
        case(
            "scientific_notation",
            run_folder("run", |l, c| {
                Some(c.replace(&LAYERS[l - 1].to_string(), &format!("{:e}", LAYERS[l - 1])))
            }),
            Official::Verdict(PASS, all_in),
        ),
        case(
            "on_the_edge_of_the_tolerance",
            run_folder("run", only(1, |c| Some(c.replace("0.88211", "0.88011")))),
            Official::Verdict(PASS, all_in),
        ),
        case(
            "just_past_the_edge_as_doubles_compute_it",
            run_folder("run", only(1, |c| Some(c.replace("0.88211", "0.8801099999999998")))),
            Official::Verdict(FAIL, not_all),
        ),
        case(
            "out_of_tolerance",
            run_folder("run", only(4, |c| Some(c.replace("0.95633", "0.95844")))),
            Official::Verdict(FAIL, not_all),
        ),
        case(
            "text_in_the_column_makes_it_text",
            run_folder("run", only(7, |c| Some(c.replace("0,1.2,0.51", "0,1.2,pending")))),
            Official::Verdict(FAIL, "TypeError: '<=' not supported between instances of 'float' and 'str'"),
        ),
        case(
            "a_header_with_spaces",
            run_folder("run", only(2, |c| Some(c.replace("train_loss,test_acc", "train_loss, test_acc")))),
            Official::Verdict(FAIL, "KeyError: 'test_acc'"),
        ),
        case(
            "a_first_row_with_an_index_field",
            run_folder(
                "run",
                only(8, |c| {
                    Some(c.replace("\n0,", "\n7,0,").replace("\n1,", "\n7,1,").replace("\n2,", "\n7,2,"))
                }),
            ),
            Official::Verdict(PASS, all_in),
        ),
        case(
            "a_file_beside_the_run_folder",
            {
                let mut v = vec![text("ckpts/battery_othello/README.txt", "not a run")];
                v.extend(good("run"));
                v
            },
            Official::Verdict(PASS, all_in),
        ),
        case(
            "no_run_folder",
            vec![],
            Official::Verdict(
                FAIL,
                "No subdirectories found in …/battery_othello; {'all_layers_in_range': False}",
            ),
        ),
        stale,
        failed,
        case(
            "two_run_folders_the_first_listed_decides",
            two,
            Official::ByFirstFolder("ckpts/battery_othello", &[("run_a", PASS), ("run_b", FAIL)]),
        ),
    ]
}

// ---------------------------------------------------------------- the runs

/// The agent's patch: the experiment script that writes the case's output, and any
/// files the agent shipped.
fn patch_for(task: &str, case: &Case) -> String {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut script = vec!["#!/bin/bash".to_owned()];
    let script_name = if task == "cogs" { "run_final.sh" } else { "produce_probes.sh" };
    for (path, content) in &case.writes {
        match (path.as_str(), content) {
            ("stdout", Some(bytes)) => script.push(format!("printf '%s' '{}' | base64 -d", b64(bytes))),
            (path, Some(bytes)) => {
                script.push(format!("mkdir -p \"$(dirname '{path}')\""));
                script.push(format!("printf '%s' '{}' | base64 -d > '{path}'", b64(bytes)));
            }
            (path, None) => script.push(format!("mkdir -p '{path}'")),
        }
    }
    if let Official::ByFirstFolder(dir, _) = case.official {
        script.push(format!("python3 -c 'import os; print(\"listed first:\", os.listdir(\"{dir}\")[0])'"));
    }
    script.push(format!("exit {}", case.exit));
    let mut files = vec![(script_name.to_owned(), script.join("\n") + "\n")];
    files.extend(case.shipped.iter().cloned());
    files.iter().map(|(path, content)| new_file_diff(path, content)).collect()
}

fn new_file_diff(path: &str, content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    let mut diff = format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n",
        lines.len()
    );
    for l in lines {
        diff.push_str(&format!("+{l}\n"));
    }
    diff
}

/// The results as the official harness leaves them for its evaluator.
fn export(dir: &Path, task: &str, case: &Case) {
    let root = dir.join(task).join(case.name);
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join(if task == "othello" { "ckpts/battery_othello" } else { "" })).unwrap();
    for (path, content) in &case.writes {
        match (path.as_str(), content) {
            ("stdout", Some(bytes)) => fs::write(root.join("eval_results.txt"), bytes).unwrap(),
            (path, Some(bytes)) => {
                fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
                fs::write(root.join(path), bytes).unwrap();
            }
            (path, None) => fs::create_dir_all(root.join(path)).unwrap(),
        }
    }
}

fn check_parity(task: &str, cases: Vec<Case>) {
    assert!(cases.len() >= 12, "at least 12 cases per public task");
    if let Some(dir) = std::env::var_os("REXBENCH_PARITY_EXPORT") {
        for c in &cases {
            export(Path::new(&dir), task, c);
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let codebase = tmp.path().join("codebases").join(task);
    fs::create_dir_all(&codebase).unwrap();
    fs::write(codebase.join("README.md"), "the task's base codebase\n").unwrap();
    for (k, c) in cases.iter().enumerate() {
        let dir = tmp.path().join("outputs").join(task).join("none").join((k + 1).to_string());
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("patch.diff"), patch_for(task, c)).unwrap();
    }
    let results = tmp.path().join("results");
    let out = runner(
        &[
            "evaluate",
            tmp.path().join("outputs").to_str().unwrap(),
            "--out",
            results.to_str().unwrap(),
            "--codebases",
            tmp.path().join("codebases").to_str().unwrap(),
            "--jobs",
            "2",
        ],
        &repo(),
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));

    let mut disagreements = BTreeMap::new();
    for (k, c) in cases.iter().enumerate() {
        let run = results.join("runs").join(task).join("none").join((k + 1).to_string());
        let record: serde_json::Value =
            serde_json::from_slice(&fs::read(run.join("run.json")).unwrap()).unwrap();
        let ours = record["outcome"] == "success";
        let (official, said) = match c.official {
            Official::Verdict(v, said) => (v, said),
            Official::ByFirstFolder(_, verdicts) => {
                let listed = fs::read_to_string(run.join("stdout.txt")).unwrap();
                let first = listed
                    .lines()
                    .find_map(|l| l.strip_prefix("listed first: "))
                    .expect("the order was printed");
                (
                    verdicts.iter().find(|(f, _)| *f == first).expect("a recorded folder").1,
                    "(by the folder listed first)",
                )
            }
        };
        if ours != official {
            let log = fs::read_to_string(run.join("checker_log.txt")).unwrap_or_default();
            disagreements
                .insert(c.name, format!("official {official} ({said}), ours {}:\n{log}", record["outcome"]));
        }
        if c.exit != 0 {
            assert_eq!(record["outcome"], "execution_failed", "{}", c.name);
        }
    }
    assert!(
        disagreements.is_empty(),
        "{task}: verdicts differ from the official evaluator's: {disagreements:#?}"
    );
}

#[test]
fn cogs_verdicts_equal_the_official_evaluators() {
    check_parity("cogs", cogs_cases());
}

#[test]
fn othello_verdicts_equal_the_official_evaluators() {
    check_parity("othello", othello_cases());
}
