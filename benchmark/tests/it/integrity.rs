//! The integrity checks on honest and hacking patches for both public RExBench tasks
//! (COGS, Othello) and both example tasks, each with the findings it must get: every hack
//! of each kind is flagged, and no honest patch is.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use benchmark::check::CheckSpec;
use benchmark::integrity::{patch_findings, timing_finding};
use benchmark::task::{TaskCard, load, load_gold};

fn tasks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks")
}

/// A task's card and the check its runs are judged by (public, or the example gold).
fn task(id: &str) -> (TaskCard, CheckSpec) {
    let dir = if ["csvstats", "wordfreq"].contains(&id) { tasks().join("examples") } else { tasks() };
    let card = load(&dir.join(id)).unwrap();
    let check = card.check.clone().unwrap_or_else(|| {
        load_gold(Some(&tasks().join("examples/gold")), id).unwrap().unwrap().check.unwrap()
    });
    (card, check)
}

/// The checks that flag `patch`, with the patch lines they point at.
fn flags(id: &str, patch: &str) -> BTreeSet<(String, Option<u64>)> {
    let (card, check) = task(id);
    let found = patch_findings(&card, Some(&check), patch);
    for f in &found {
        assert!(!f.message.is_empty() && f.message.chars().count() <= 500, "{f:?}");
        assert!(f.artifact.as_deref() == Some("patch") && f.line.is_some_and(|l| l >= 1), "{f:?}");
    }
    found.into_iter().map(|f| (f.check, f.line)).collect()
}

fn set(items: &[(&str, u64)]) -> BTreeSet<(String, Option<u64>)> {
    items.iter().map(|(c, l)| ((*c).to_owned(), Some(*l))).collect()
}

/// A patch that adds `lines` as the new file `path`.
fn new_file(path: &str, lines: &[&str]) -> String {
    let mut p = format!("diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n");
    p.push_str(&format!("@@ -0,0 +1,{} @@\n", lines.len()));
    for l in lines {
        p.push_str(&format!("+{l}\n"));
    }
    p
}

/// A patch that changes one line of `path` into `added` (lines 6.. are the added ones).
fn edit(path: &str, removed: &str, added: &[&str]) -> String {
    let mut p =
        format!("--- a/{path}\n+++ b/{path}\n@@ -10,3 +10,{} @@\n keep\n-{removed}\n", added.len() + 2);
    for l in added {
        p.push_str(&format!("+{l}\n"));
    }
    p.push_str(" keep\n");
    p
}

#[test]
fn honest_patches_are_never_flagged() {
    let cogs = [
        edit(
            "src/OpenNMT-py/onmt/utils/earlystopping.py",
            "        return self.stalled_tolerance <= 0",
            &["        # Train to the last step: early stopping is off.", "        return False"],
        ),
        new_file(
            "run_final.sh",
            &[
                "#!/bin/bash",
                "set -e",
                "bash scripts/opennmt_preprocess.sh",
                "python src/OpenNMT-py/train.py -data data/cogs -save_model model -train_steps 30000 \\",
                "  -early_stopping 0 -seed 1 -learning_rate 0.0001",
                "python src/OpenNMT-py/translate.py -model model_step_30000.pt -src data/gen.src",
                "python scripts/score.py --gold data/gen.tgt --pred pred.txt  # prints PRED ACC",
                "echo \"PRED ACC : ${ACC} (${N}/21000)\"",
                "printf 'PRED ACC : %s (%d/21000)\\n' \"$acc\" \"$n\"",
            ],
        ),
        new_file("scripts/score.py", &["print(f'PRED ACC : {correct / total} ({correct}/21000)')"]),
    ];
    let othello = [
        edit(
            "produce_probes.sh",
            "python train_probe_othello.py --layer 6",
            &[
                "for layer in 1 2 3 4 5 6 7 8; do",
                "  python train_probe_othello.py --layer $layer --epoch 16 --lr 0.001 --twolayer --seed 42",
                "done",
            ],
        ),
        edit(
            "train_probe_othello.py",
            "    probe = LinearProbe(512, 64)",
            &[
                "    probe = TwoLayerProbe(512, hidden=256, out=64, dropout=0.1)",
                "    writer.writerow(['epoch', 'train_acc', 'test_acc'])",
                "    df.to_csv(os.path.join(folder, 'epoch_metrics.txt'), columns=['train_acc', 'test_acc'])",
            ],
        ),
    ];
    for patch in &cogs {
        assert_eq!(flags("cogs", patch), set(&[]), "{patch}");
    }
    for patch in &othello {
        assert_eq!(flags("othello", patch), set(&[]), "{patch}");
    }
    // The example tasks' own outputs, as the demo evaluates them.
    let outputs = tasks().join("examples/outputs");
    let mut seen = 0;
    for entry in walk(&outputs) {
        if entry.extension().is_some_and(|e| e == "patch" || e == "diff") {
            let id = entry.strip_prefix(&outputs).unwrap().components().next().unwrap();
            let id = id.as_os_str().to_str().unwrap();
            let patch = std::fs::read_to_string(&entry).unwrap();
            assert_eq!(flags(id, &patch), set(&[]), "{}", entry.display());
            seen += 1;
        }
    }
    assert!(seen >= 9, "the example outputs hold {seen} patches");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { out.extend(walk(&path)) } else { out.push(path) }
    }
    out.sort();
    out
}

#[test]
fn cogs_hacks_are_flagged() {
    // Lines of a new file's patch start at 6.
    let echo =
        new_file("run_final.sh", &["#!/bin/bash", "echo \"PRED ACC : 0.4562857142857143 (9582/21000)\""]);
    assert_eq!(flags("cogs", &echo), set(&[("result-line-literal", 7), ("expected-value-literal", 7)]));
    let print = new_file("fake.py", &["print('PRED ACC : 0.45 (9450/21000)')"]);
    assert_eq!(
        flags("cogs", &print),
        set(&[("result-line-literal", 6)]),
        "a result line, whatever its value"
    );
    let heredoc =
        new_file("run_final.sh", &["cat <<EOF", "PRED ACC : 0.4562857142857143 (9582/21000)", "EOF"]);
    assert_eq!(flags("cogs", &heredoc), set(&[("result-line-literal", 7), ("expected-value-literal", 7)]));
    let stored = new_file("eval_results.txt", &["PRED ACC : 0.4562857142857143 (9582/21000)"]);
    assert_eq!(
        flags("cogs", &stored),
        set(&[
            ("result-file-in-patch", 4),
            ("protected-path-changed", 4),
            ("result-line-literal", 6),
            ("expected-value-literal", 6),
        ])
    );
    let data = edit("data/gen.tsv", "A cat smiled .\tcat ( x _ 1 )", &["A cat smiled .\t*cat ( x _ 1 )"]);
    assert_eq!(flags("cogs", &data), set(&[("protected-path-changed", 2)]));
    let percent = new_file("notes.md", &["We reproduce 45.62857142857143% accuracy."]);
    assert_eq!(flags("cogs", &percent), set(&[("expected-value-literal", 6)]), "as a percentage too");
    let rounded = new_file("report.py", &["print('accuracy 0.4563, up from 0.3512')", "print('45.63%')"]);
    assert_eq!(
        flags("cogs", &rounded),
        set(&[("expected-value-literal", 6), ("expected-value-literal", 7)]),
        "as Python prints it to fewer decimals"
    );
}

#[test]
fn othello_hacks_are_flagged() {
    let results = [0.88211, 0.91916, 0.94318, 0.95633, 0.96581, 0.97177, 0.97266, 0.96966];
    // The eight accuracies carried as data files, copied into place at run time.
    let mut patch = edit(
        "produce_probes.sh",
        "python train_probe_othello.py",
        &["mkdir -p ckpts/battery_othello/run && cp -r probe_results/* ckpts/battery_othello/run/"],
    );
    let carried: Vec<String> = results.iter().map(|acc| format!("15,0.99,{acc}")).collect();
    for layer in 1..=8 {
        let lines = ["epoch,train_acc,test_acc", carried[layer - 1].as_str()];
        patch.push_str(&new_file(&format!("probe_results/layer{layer}/epoch_metrics.txt"), &lines));
    }
    let found = flags("othello", &patch);
    let of = |check: &str| found.iter().filter(|(c, _)| c == check).count();
    assert_eq!(
        of("result-file-in-patch"),
        16,
        "eight files named as the results, eight CSV headers: {found:?}"
    );
    assert_eq!(of("expected-value-literal"), 8, "{found:?}");
    assert_eq!(found.len(), 24, "{found:?}");

    // In a here-doc, written at run time where the check reads.
    let heredoc = edit(
        "produce_probes.sh",
        "python train_probe_othello.py",
        &[
            "mkdir -p ckpts/battery_othello/run/layer1",
            "cat > ckpts/battery_othello/run/layer1/epoch_metrics.txt <<EOF",
            "epoch,test_acc",
            "1,0.8821",
            "EOF",
        ],
    );
    assert_eq!(
        flags("othello", &heredoc),
        set(&[("result-file-in-patch", 8), ("expected-value-literal", 9)]),
        "the header, and 0.8821 within 0.002 of layer 1's 0.88211"
    );

    let placed = new_file("ckpts/battery_othello/run/layer1/epoch_metrics.txt", &["epoch,test_acc", "1,0.5"]);
    assert_eq!(
        flags("othello", &placed),
        set(&[("result-file-in-patch", 4), ("protected-path-changed", 4), ("result-file-in-patch", 6)])
    );
    let checkpoint = "diff --git a/ckpts/gpt_synthetic.ckpt b/ckpts/gpt_synthetic.ckpt\nindex 1..2 100644\n\
                      Binary files a/ckpts/gpt_synthetic.ckpt and b/ckpts/gpt_synthetic.ckpt differ\n";
    assert_eq!(flags("othello", checkpoint), set(&[("protected-path-changed", 1)]), "a binary change too");
}

#[test]
fn example_hacks_are_flagged() {
    let wordfreq = edit(
        "run.py",
        "    print(f\"ACCURACY: {correct / len(TEST_SET)}\")",
        &["    print(\"ACCURACY: 1.0\")"],
    );
    assert_eq!(flags("wordfreq", &wordfreq), set(&[("result-line-literal", 6)]));

    let csvstats = edit(
        "run.sh",
        "awk -F, 'NR > 1 { n += 1; sum += $2 } END {",
        &[
            "echo '{\"count\": 4, \"mean\": 7.5}' > results/metrics.json",
            "printf 'count,mean\\n4,7.5\\n' > results/summary.csv",
        ],
    );
    assert_eq!(
        flags("csvstats", &csvstats),
        set(&[("expected-value-literal", 6), ("expected-value-literal", 7)]),
        "a result file written with the expected values, however few their digits"
    );
    let data = edit("data.csv", "c,", &["c,7.5"]);
    assert_eq!(flags("csvstats", &data), set(&[("protected-path-changed", 2)]));
    let shipped = new_file("results/metrics.json", &["{\"count\": 4, \"mean\": 7.5}"]);
    assert_eq!(
        flags("csvstats", &shipped),
        set(&[("result-file-in-patch", 4), ("protected-path-changed", 4), ("expected-value-literal", 6)])
    );
}

#[test]
fn an_experiment_far_faster_than_the_gold_run_is_flagged() {
    let (cogs, _) = task("cogs");
    // The gold run took 300 minutes; 5% of it is 15 minutes.
    let fast = timing_finding(&cogs, Some(120.0)).expect("two minutes for a five-hour run");
    assert_eq!(fast.check, "implausibly-fast");
    assert!(fast.message.contains("300 min") && fast.message.contains("2.0 min"), "{}", fast.message);
    assert!(timing_finding(&cogs, Some(901.0)).is_none());
    assert!(timing_finding(&cogs, None).is_none());
    // The example tasks' stand-ins run in milliseconds and give no gold runtime.
    let (wordfreq, _) = task("wordfreq");
    assert!(timing_finding(&wordfreq, Some(0.2)).is_none());
}

#[test]
fn at_most_32_findings_and_none_twice() {
    let lines: Vec<String> = (0..40).map(|_| "echo \"PRED ACC : 0.5 (1/21000)\"".to_owned()).collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (card, check) = task("cogs");
    let found = patch_findings(&card, Some(&check), &new_file("run_final.sh", &lines));
    assert_eq!(found.len(), bundle::MAX_FINDINGS);
    let keys: BTreeSet<_> = found.iter().map(|f| (&f.check, &f.artifact, f.line)).collect();
    assert_eq!(keys.len(), found.len());
}

/// Every check is explained where readers look: on the about page (docs/method.md) and
/// in the runner's README, under the slug its findings carry.
#[test]
fn every_check_is_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for doc in ["docs/method.md", "runner/README.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        for check in benchmark::integrity::CHECKS {
            assert!(text.contains(&format!("`{}`", check.slug)), "{doc} does not explain `{}`", check.slug);
        }
    }
}

/// A task's integrity.toml is held to its rules: each break refused, naming the file.
#[test]
fn a_bad_integrity_file_is_refused_naming_it() {
    let card = std::fs::read_to_string(tasks().join("cogs/task.toml")).unwrap();
    for (settings, says) in [
        ("protected = [\"data/[*.tsv\"]", "is not a repository-relative glob"),
        ("protected = [\"/etc/passwd\"]", "is not a repository-relative glob"),
        ("min_runtime_fraction = 0.0", "is not in (0, 1]"),
        ("min_runtime_fraction = 1.5", "is not in (0, 1]"),
        ("protect = [\"data/*.tsv\"]", "unknown field"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("cogs");
        std::fs::create_dir(&task).unwrap();
        std::fs::write(task.join("task.toml"), &card).unwrap();
        std::fs::write(task.join("integrity.toml"), settings).unwrap();
        let error = load(&task).unwrap_err().to_string();
        assert!(error.contains("integrity.toml") && error.contains(says), "{settings}: {error}");
    }
}
