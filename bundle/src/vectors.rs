//! The conformance vectors: bundles that any verifier of this format must accept or
//! refuse, each refusal for one named rule. They are made here, from this crate's
//! writer and signer (the valid ones) and from deliberate breakages of them (the
//! rest), deterministically: the same keys give the same bytes, so the committed
//! `vectors/` folder is checked against a fresh generation by the tests.
//!
//! `cargo run -p rexbench-bundle --features vectors --example vectors -- vectors` writes
//! them, with `expected.json` (each vector's verdict, the rule's code and why). A verifier
//! is to trust `test-key/key.pub.pem`, know the tasks `cogs` and `othello`, and hold the
//! bundles' claims to [`claims`].

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{BundleBuilder, Digest, Envelope, Limits, Manifest, SecretKey};

/// The tasks a verifier of the vectors knows.
pub const TASKS: [&str; 2] = ["cogs", "othello"];

/// The board's rules a verifier of the vectors holds them to (spec §5a): the task set
/// `ab…ab` as RExBench 1.0, and the rules the cards of `cogs` and `othello` give (five
/// attempts each; their public bounds).
pub fn claims() -> crate::Claims {
    use crate::{Bound, Expectation, TaskRule};
    let othello = [0.88211, 0.91916, 0.94318, 0.95633, 0.96581, 0.97177, 0.97266, 0.96966];
    crate::Claims {
        task_sets: [crate::TaskSet {
            digest: "ab".repeat(32),
            name: "RExBench".into(),
            version: "1.0".into(),
        }]
        .into(),
        tasks: [
            (
                "cogs".to_owned(),
                TaskRule {
                    attempts: 5,
                    bounds: vec![Bound {
                        metric: "pred_acc".into(),
                        expectation: Expectation::Equals(0.4562857142857143),
                    }],
                },
            ),
            (
                "othello".to_owned(),
                TaskRule {
                    attempts: 5,
                    bounds: othello
                        .iter()
                        .enumerate()
                        .map(|(k, &expected)| Bound {
                            metric: format!("layer{}_test_acc", k + 1),
                            expectation: Expectation::Within { expected, tolerance: 0.002 },
                        })
                        .collect(),
                },
            ),
        ]
        .into(),
    }
}

/// What a verifier must say of a vector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    pub valid: bool,
    /// For an invalid vector: the code of the rule it breaks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub why: String,
    /// For a valid vector: its bundle id (the manifest's SHA-256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_id: Option<String>,
    /// For a valid submission: the marks a board gives its runs from the bundle alone
    /// (spec §4m, §5b), priced with a table that prices nothing of `RefModel`; a run
    /// without one is not listed. Absent for a reproduction, which is not marked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marks: Option<Vec<crate::RunMarks>>,
}

#[derive(Debug)]
pub struct Vector {
    /// Its file name: `valid-….tar.gz` or `bad-….tar.gz`.
    pub name: String,
    pub bytes: Vec<u8>,
    pub expected: Expected,
}

/// Codes no vector carries, and why: the rule is tested in `bundle/tests/it` instead.
pub const NOT_VECTORS: [(&str, &str); 7] = [
    (
        "private_metrics_in_manifest",
        "a verifier needs the board's word on which tasks' checks are private, which the vectors' contract \
         (the tasks cogs and othello, whose checks are public) does not give: the server's and the runner's \
         tests hold it",
    ),
    ("io_error", "a failure to read, not a property of the bundle"),
    ("artifact_store_failed", "a failure of the server's artifact store, not of the bundle"),
    ("storage_full", "a full disk on the server, not a property of the bundle"),
    ("bundle_too_large", "a vector would be 256 MiB of incompressible bytes"),
    ("uncompressed_too_large", "a vector would hold 1 GiB of artifacts"),
    (
        "too_many_members",
        "under the default limits the manifest (4 MiB at most) cannot list 100,000 artifacts, so another \
         rule refuses first",
    ),
];

/// Every vector, signed by `trusted` (the key a verifier trusts) and, where a vector
/// needs a stranger's signature, `stranger`.
pub fn all(trusted: &SecretKey, stranger: &SecretKey) -> Vec<Vector> {
    let base = Base::new();
    let mut out = Vec::new();
    let mut valid =
        |name: &str, why: &str, manifest: Manifest, artifacts: &[Vec<u8>], keys: &[&SecretKey]| {
            let mut b = BundleBuilder::new(manifest);
            for bytes in artifacts {
                b.add_bytes(bytes.clone(), "text/plain");
            }
            let mut bytes = Vec::new();
            let id = b.write(keys, &mut bytes).expect("a valid vector writes");
            out.push(Vector {
                name: format!("valid-{name}.tar.gz"),
                bytes,
                expected: Expected {
                    valid: true,
                    code: None,
                    why: why.into(),
                    bundle_id: Some(id.to_hex()),
                    marks: None,
                },
            });
        };
    let manifest =
        || serde_json::from_value::<Manifest>(base.manifest.clone()).expect("the base manifest parses");
    valid("basic", "well-formed, signed by the test key", manifest(), &base.artifacts, &[trusted]);
    valid(
        "two-signers",
        "an unknown signer beside the trusted one is ignored",
        manifest(),
        &base.artifacts,
        &[stranger, trusted],
    );
    let mut published = base.manifest.clone();
    published["provenance"] = json!({"kind": "published", "source": "RExBench paper, Table 5"});
    for run in published["runs"].as_array_mut().expect("runs") {
        run.as_object_mut().expect("a run").remove("artifacts");
    }
    published["artifacts"] = json!({});
    let published = serde_json::from_value(published).expect("parses");
    valid("published", "published provenance, no artifacts", published, &[], &[trusted]);
    // A run with findings (spec §4a), their words in its x-findings artifact (§4g).
    let (manifest_bytes, members) = base.with_findings(trusted, 2, false);
    out.push(Vector {
        name: "valid-findings.tar.gz".into(),
        bytes: base.signed(&manifest_bytes, trusted, &members),
        expected: Expected {
            valid: true,
            code: None,
            why: "a run with integrity findings, one pointing at a line of its patch, their words in x-findings"
                .into(),
            bundle_id: Some(Digest::of(&manifest_bytes).to_hex()),
            marks: None,
        },
    });

    // A run whose metrics are sealed (spec §4j), as `rexbench pack` seals a private
    // check's.
    let (manifest_bytes, members) = base.with_sealed_metrics(trusted, false);
    out.push(Vector {
        name: "valid-sealed-metrics.tar.gz".into(),
        bytes: base.signed(&manifest_bytes, trusted, &members),
        expected: Expected {
            valid: true,
            code: None,
            why: "a run whose metrics are named by a salted digest, their values in x-metrics".into(),
            bundle_id: Some(Digest::of(&manifest_bytes).to_hex()),
            marks: None,
        },
    });

    // A run with its provenance record (spec §4b), as the runner writes one.
    let record = crate::ProvenanceRecord::parse(PROVENANCE_EXAMPLE.as_bytes()).expect("the example is valid");
    let (manifest_bytes, members) = base.with_record(&record.to_bytes());
    out.push(Vector {
        name: "valid-provenance.tar.gz".into(),
        bytes: base.signed(&manifest_bytes, trusted, &members),
        expected: Expected {
            valid: true,
            code: None,
            why: "a run with its provenance record (x-provenance)".into(),
            bundle_id: Some(Digest::of(&manifest_bytes).to_hex()),
            marks: None,
        },
    });

    // Runs a board marks (spec §4m, §5b): a second success of `cogs` whose patch is the
    // first's written otherwise (a line before it, other spacing) and whose model wrote no
    // token, and a failed run of `othello` with tokens of a model the table does not price.
    let (manifest_bytes, members) = base.marked();
    out.push(Vector {
        name: "valid-marked.tar.gz".into(),
        bytes: base.signed(&manifest_bytes, trusted, &members),
        expected: Expected {
            valid: true,
            code: None,
            why:
                "runs a board stores but marks: a patch copied from another attempt however written, a patch \
                  with no output token, tokens no price table prices"
                    .into(),
            bundle_id: Some(Digest::of(&manifest_bytes).to_hex()),
            marks: None,
        },
    });

    // A reproduction (spec §4d): the maintainers re-ran two runs of another bundle.
    let reproduction = reproduction_of(&base.manifest);
    let (reproduction_bytes, members) = (pretty(&reproduction), base.members());
    out.push(Vector {
        name: "valid-reproduction.tar.gz".into(),
        bytes: base.signed(&reproduction_bytes, trusted, &members),
        expected: Expected {
            valid: true,
            code: None,
            why: "a reproduction of two runs of another bundle, with the executor's hardware".into(),
            bundle_id: Some(Digest::of(&reproduction_bytes).to_hex()),
            marks: None,
        },
    });

    let mut bad = |name: &str, code: &str, why: &str, bytes: Vec<u8>| {
        out.push(Vector {
            name: format!("bad-{name}.tar.gz"),
            bytes,
            expected: Expected {
                valid: false,
                code: Some(code.into()),
                why: why.into(),
                bundle_id: None,
                marks: None,
            },
        });
    };
    for (name, code, why, mutate) in manifest_breakages(&base) {
        let mut m = base.manifest.clone();
        mutate(&mut m);
        bad(name, code, why, base.signed(&pretty(&m), trusted, &base.members()));
    }
    archive_breakages(&base, trusted, stranger, &mut bad);
    for (name, why, mutate) in reproduction_breakages() {
        let mut m = reproduction.clone();
        mutate(&mut m);
        bad(name, "invalid_reproduction", why, base.signed(&pretty(&m), trusted, &base.members()));
    }
    let outside = PROVENANCE_EXAMPLE.replace("\"data/gen.tsv\"", "\"/etc/passwd\"");
    let (manifest_bytes, members) = base.with_record(outside.as_bytes());
    bad(
        "provenance-record",
        "invalid_provenance_record",
        "a provenance record that names a file outside the working copy",
        base.signed(&manifest_bytes, trusted, &members),
    );
    let (manifest_bytes, members) = base.with_sealed_metrics(trusted, true);
    bad(
        "metrics-text",
        "invalid_metrics_text",
        "an x-metrics artifact whose values are not those its run's metrics_digest names",
        base.signed(&manifest_bytes, trusted, &members),
    );
    let (manifest_bytes, members) = base.with_findings(trusted, 2, true);
    bad(
        "finding-text",
        "invalid_finding_text",
        "an x-findings artifact whose first text is not the words its finding's text_digest names",
        base.signed(&manifest_bytes, trusted, &members),
    );
    out.sort_by(|a, b| a.name.cmp(&b.name));
    for vector in &mut out {
        vector.expected.marks = marks_of(&vector.name);
    }
    out
}

/// Writes every vector and `expected.json` into `dir`.
pub fn write(dir: &Path, trusted: &SecretKey, stranger: &SecretKey) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut expected = BTreeMap::new();
    for v in all(trusted, stranger) {
        std::fs::write(dir.join(&v.name), &v.bytes)?;
        expected.insert(v.name, v.expected);
    }
    let mut json = serde_json::to_vec_pretty(&expected).expect("serializes");
    json.push(b'\n');
    std::fs::write(dir.join("expected.json"), json)
}

/// The base manifest as a reproduction of another bundle's runs.
fn reproduction_of(base: &Value) -> Value {
    let mut m = base.clone();
    m["reproduction"] = json!({
        "of": "cd".repeat(32),
        "executor": "slurm",
        "hardware": {"cpus": 8, "memory_bytes": 68_719_476_736_u64, "gpus": 1, "gpu_model": "NVIDIA A100 80GB",
                     "description": "Slurm partition gpu: 8 CPUs, 64 GiB, 1 × NVIDIA A100 80GB"}
    });
    for run in m["runs"].as_array_mut().expect("runs") {
        run["duration_s"] = json!(400.0);
    }
    // A reproduction re-runs the sampled runs only: its attempts may have gaps (§4f).
    m["runs"][1]["attempt"] = json!(4);
    m
}

/// Each rule of a reproduction, broken once in a copy of the valid one.
fn reproduction_breakages() -> Vec<(&'static str, &'static str, Mutation)> {
    vec![
        (
            "reproduction-of",
            "a reproduction that names no bundle id",
            change(|m| m["reproduction"]["of"] = json!("the-agent's-bundle")),
        ),
        (
            "reproduction-provenance",
            "a reproduction whose runs are imported, not evaluated by the runner",
            change(|m| m["provenance"] = json!({"kind": "imported", "source": "harbor 0.26.0, job j"})),
        ),
        (
            "reproduction-no-patch",
            "a reproduction's run that names no patch it re-ran",
            change(|m| {
                m["runs"][1]["artifacts"].as_object_mut().expect("artifacts").remove("patch");
                m["runs"][1]["outcome"] = json!("empty_patch");
            }),
        ),
        (
            "reproduction-infra-error-heldout",
            "a reproduction's run that ended infra_error (a try) with a held-out re-run beside it",
            change(|m| {
                m["runs"][1]["outcome"] = json!("infra_error");
                let run = m["runs"][1].clone();
                m["reproduction"]["heldout"] = json!([{"task": run["task"], "hint": run["hint"],
                    "attempt": run["attempt"], "variant": "ef".repeat(32), "generalised": false}]);
            }),
        ),
        (
            "reproduction-no-duration",
            "a reproduction's run without its duration, which is what it cost",
            change(|m| {
                m["runs"][0].as_object_mut().expect("a run").remove("duration_s").map(drop).unwrap_or(())
            }),
        ),
        (
            "reproduction-hardware",
            "a reproduction whose hardware has no CPUs",
            change(|m| m["reproduction"]["hardware"]["cpus"] = json!(0)),
        ),
    ]
}

type Mutation = Box<dyn Fn(&mut Value)>;

fn change(f: impl Fn(&mut Value) + 'static) -> Mutation {
    Box::new(f)
}

/// Each rule of the manifest, broken once in a copy of the base manifest.
fn manifest_breakages(base: &Base) -> Vec<(&'static str, &'static str, &'static str, Mutation)> {
    let patch = base.digests[0].clone();
    let spare = Digest::of(b"spare").to_hex();
    fn run0(m: &mut Value) -> &mut Value {
        &mut m["runs"][0]
    }
    vec![
        (
            "schema",
            "unsupported_schema",
            "a schema this version does not know",
            change(|m| m["schema"] = json!("rexbench.manifest/v2")),
        ),
        (
            "created-at",
            "invalid_created_at",
            "created_at is not an RFC 3339 time",
            change(|m| m["created_at"] = json!("yesterday")),
        ),
        (
            "created-at-future",
            "created_at_in_future",
            "created_at later than any verifier's clock (a submitter ordering their bundles by a date they chose)",
            change(|m| m["created_at"] = json!("2999-01-01T00:00:00Z")),
        ),
        (
            "benchmark",
            "invalid_benchmark",
            "an empty benchmark version",
            change(|m| m["benchmark"]["version"] = json!("")),
        ),
        (
            "task-set-digest",
            "invalid_task_set_digest",
            "a task-set digest in upper case",
            change(|m| m["benchmark"]["task_set_digest"] = json!("AB".repeat(32))),
        ),
        ("runner", "invalid_runner", "an empty runner name", change(|m| m["runner"]["name"] = json!(""))),
        (
            "provenance",
            "invalid_provenance",
            "a provenance kind that does not exist",
            change(|m| m["provenance"]["kind"] = json!("imagined")),
        ),
        (
            "provenance-source",
            "provenance_source_missing",
            "published results without their source",
            change(|m| m["provenance"] = json!({"kind": "published"})),
        ),
        (
            "published-artifacts",
            "published_run_has_artifacts",
            "a published run with artifacts",
            change(|m| m["provenance"] = json!({"kind": "published", "source": "Table 11"})),
        ),
        (
            "agent-id",
            "invalid_agent_id",
            "an agent id that is not a slug",
            change(|m| m["agent"]["id"] = json!("OpenHands/Claude")),
        ),
        (
            "agent-field",
            "invalid_agent_field",
            "a model name of 101 characters",
            change(|m| m["agent"]["model"] = json!("x".repeat(101))),
        ),
        (
            "agent-badge-words",
            "agent_badge_words",
            "a display name that writes the board's badges, in look-alike letters",
            change(|m| {
                m["agent"]["display_name"] = json!("Agent \u{2714} V\u{0435}rified \u{00b7} by Maintainers")
            }),
        ),
        (
            "agent-url",
            "invalid_agent_url",
            "a javascript: URL",
            change(|m| m["agent"]["url"] = json!("javascript:alert(1)")),
        ),
        ("no-runs", "run_count_out_of_range", "no runs at all", change(|m| m["runs"] = json!([]))),
        (
            "duplicate-run",
            "duplicate_run",
            "the same task, hint and attempt twice",
            change(|m| {
                let first = m["runs"][0].clone();
                m["runs"].as_array_mut().expect("runs").push(first);
            }),
        ),
        (
            "unknown-task",
            "unknown_task",
            "a task the verifier does not know",
            change(|m| run0(m)["task"] = json!("no-such-task")),
        ),
        (
            "hint",
            "invalid_hint",
            "a hint condition that does not exist",
            change(|m| run0(m)["hint"] = json!("level1")),
        ),
        ("attempt", "invalid_attempt", "attempt 0", change(|m| run0(m)["attempt"] = json!(0))),
        (
            "attempt-gap",
            "attempt_gap",
            "attempt 3 of a task and hint condition without attempts 1 and 2 (a failing attempt left out)",
            change(|m| run0(m)["attempt"] = json!(3)),
        ),
        (
            "outcome",
            "invalid_outcome",
            "an outcome that does not exist",
            change(|m| run0(m)["outcome"] = json!("partial_success")),
        ),
        (
            "regrade",
            "invalid_regrade",
            "a regraded run whose verdict before the regrade is not an outcome",
            change(|m| run0(m)["regraded"] = json!({"from": "partial_success"})),
        ),
        (
            "error-type",
            "invalid_error_type",
            "an error type of 101 characters",
            change(|m| run0(m)["error_type"] = json!("E".repeat(101))),
        ),
        (
            "recall",
            "invalid_file_recall",
            "file recall above 1",
            change(|m| run0(m)["file_recall"] = json!(1.5)),
        ),
        (
            "files-changed",
            "invalid_files_changed",
            "a changed file outside the codebase",
            change(|m| run0(m)["files_changed"] = json!(["../../etc/passwd"])),
        ),
        ("number", "invalid_number", "a negative duration", change(|m| run0(m)["duration_s"] = json!(-3.0))),
        (
            "metric",
            "invalid_metric",
            "a metric with an empty name",
            change(|m| run0(m)["metrics"] = json!({"": 1.0})),
        ),
        (
            "artifact-role",
            "invalid_artifact_role",
            "an artifact role that is neither known nor x-",
            change(move |m| run0(m)["artifacts"]["screenshot"] = json!(patch.clone())),
        ),
        (
            "digest",
            "invalid_digest",
            "an artifact named by something that is not a digest",
            change(|m| run0(m)["artifacts"]["x-trace"] = json!("not-a-digest")),
        ),
        (
            "artifact-not-listed",
            "artifact_not_listed",
            "a run names an artifact the table does not list",
            change(|m| run0(m)["artifacts"]["x-trace"] = json!(Digest::of(b"elsewhere").to_hex())),
        ),
        (
            "artifact-unused",
            "artifact_unused",
            "the table lists an artifact no run names",
            change(move |m| m["artifacts"][spare.clone()] = json!({"media_type": "text/plain", "size": 5})),
        ),
        ("media-type", "invalid_media_type", "a media type without a subtype", {
            let p = base.digests[0].clone();
            change(move |m| m["artifacts"][p.clone()]["media_type"] = json!("diff"))
        }),
        (
            "findings-too-many",
            "too_many_findings",
            "33 findings on one run",
            change(|m| run0(m)["findings"] = findings(33)),
        ),
        (
            "finding-text-in-manifest",
            "finding_text_in_manifest",
            "a finding whose message quotes the run's outputs, as manifests did before spec §4g",
            change(|m| {
                run0(m)["findings"] = json!([{"check": "result-line-literal", "message": "line 3 prints `acc: 0.91`",
                                              "artifact": "patch", "line": 3}])
            }),
        ),
        (
            "finding-check",
            "invalid_finding_check",
            "a check named by something that is not a slug",
            change(|m| run0(m)["findings"] = json!([{"check": "Result_Line", "message": "m"}])),
        ),
        (
            "finding-message",
            "invalid_finding_message",
            "a finding that says nothing",
            change(|m| run0(m)["findings"] = json!([{"check": "result-line-literal", "message": ""}])),
        ),
        (
            "finding-artifact",
            "finding_unknown_artifact",
            "evidence in an artifact the run does not have",
            change(
                |m| run0(m)["findings"] = json!([{"check": "result-line-literal", "message": "m", "artifact": "checker_log", "line": 1}]),
            ),
        ),
        (
            "finding-line",
            "invalid_finding_line",
            "evidence on line 0",
            change(|m| {
                run0(m)["findings"] =
                    json!([{"check": "result-line-literal", "message": "m", "artifact": "patch", "line": 0}])
            }),
        ),
        (
            "finding-duplicate",
            "duplicate_finding",
            "the same check, artifact and line twice",
            change(|m| {
                let f =
                    json!({"check": "result-line-literal", "message": "m", "artifact": "patch", "line": 2});
                run0(m)["findings"] = json!([f.clone(), f]);
            }),
        ),
        (
            "evidence-missing",
            "evidence_missing",
            "an evaluated success without its patch",
            change(|m| {
                run0(m)["artifacts"].as_object_mut().expect("artifacts").remove("patch");
            }),
        ),
        // Spec §5a: the claims a board holds a bundle to (`claims()`).
        (
            "unknown-task-set",
            "unknown_task_set",
            "a task set the board does not know (a made-up digest sheds the history of the real one)",
            change(|m| m["benchmark"]["task_set_digest"] = json!("cd".repeat(32))),
        ),
        (
            "too-many-attempts",
            "too_many_attempts",
            "six valid attempts of a task and hint condition whose card asks five",
            change(|m| {
                let patch = m["runs"][0]["artifacts"]["patch"].clone();
                let runs = m["runs"].as_array_mut().expect("runs");
                for attempt in 2..=6 {
                    runs.push(json!({"task": "cogs", "hint": "none", "attempt": attempt,
                                     "outcome": "wrong_result", "artifacts": {"patch": patch}}));
                }
            }),
        ),
        // Spec §4n: one task, one folder.
        (
            "task-folder-split",
            "task_folder_split",
            "two runs of cogs that ran two task folders",
            change(|m| {
                let patch = m["runs"][0]["artifacts"]["patch"].clone();
                run0(m)["task_folder"] = json!(format!("sha256:{}", "a".repeat(64)));
                m["runs"].as_array_mut().expect("runs").push(json!({
                    "task": "cogs", "hint": "none", "attempt": 2, "outcome": "wrong_result",
                    "artifacts": {"patch": patch}, "task_folder": format!("sha256:{}", "b".repeat(64)),
                }));
            }),
        ),
        (
            "agent-record-missing",
            "agent_record_missing",
            "an evaluated success with its patch but without the agent's log or trajectory (its log kept under another role)",
            change(|m| {
                let artifacts = run0(m)["artifacts"].as_object_mut().expect("artifacts");
                let log = artifacts.remove("agent_log").expect("an agent log");
                artifacts.insert("x-notes".into(), log);
            }),
        ),
        (
            "success-against-check",
            "success_against_check",
            "a success whose own metric pred_acc is 0.5, where the card's check holds it to exactly 0.4562857142857143",
            change(|m| run0(m)["metrics"]["pred_acc"] = json!(0.5)),
        ),
        (
            "unknown-field",
            "unknown_field",
            "a field the schema does not have",
            change(|m| run0(m)["score"] = json!(1)),
        ),
        (
            "malformed",
            "manifest_malformed",
            "a field of the wrong type",
            change(|m| m["agent"]["framework"] = json!(7)),
        ),
    ]
}

/// `n` well-formed findings, each its own check; the first points at line 3 of the
/// patch.
fn findings(n: usize) -> Value {
    let mut out = vec![json!({
        "check": "result-line-literal",
        "message": "line 3 of the patch prints the task's result line with a literal value",
        "artifact": "patch",
        "line": 3,
    })];
    out.extend((1..n).map(|i| json!({"check": format!("check-{i}"), "message": "seen"})));
    Value::Array(out)
}

/// Each rule of the archive and the envelope, broken once.
fn archive_breakages(
    base: &Base,
    trusted: &SecretKey,
    stranger: &SecretKey,
    bad: &mut dyn FnMut(&str, &str, &str, Vec<u8>),
) {
    let manifest = pretty(&base.manifest);
    let envelope = Envelope::sign(&manifest, &[trusted]).to_bytes();
    let env = || Member::file("envelope.json", envelope.clone());
    let artifacts = base.members();
    let with = |members: Vec<Member>| gzip(&tar(&members));
    let good = base.signed(&manifest, trusted, &artifacts);

    bad("not-gzip", "not_gzip", "a zip file, not gzip", b"PK\x03\x04 this is a zip".to_vec());
    bad("truncated", "corrupt_archive", "the archive stops halfway", good[..good.len() / 2].to_vec());
    bad("envelope-missing", "envelope_missing", "an empty archive", with(vec![]));
    let mut reordered = artifacts.clone();
    reordered.push(env());
    bad("envelope-not-first", "envelope_not_first", "envelope.json is not the first member", with(reordered));
    bad(
        "traversal",
        "unsafe_path",
        "a member whose path leaves the bundle",
        with([vec![env(), Member::file("../../etc/passwd", b"root".to_vec())], artifacts.clone()].concat()),
    );
    bad(
        "symlink-member",
        "non_regular_member",
        "a symbolic link among the members",
        with(
            [
                vec![
                    env(),
                    Member { kind: tar::EntryType::Symlink, ..Member::file("artifacts/link", vec![]) },
                ],
                artifacts.clone(),
            ]
            .concat(),
        ),
    );
    bad(
        "unexpected-member",
        "unexpected_member",
        "a member the manifest does not account for",
        with([vec![env()], artifacts.clone(), vec![Member::file("notes.txt", b"hi".to_vec())]].concat()),
    );
    bad(
        "duplicate-member",
        "duplicate_member",
        "an artifact twice",
        with([vec![env()], artifacts.clone(), vec![artifacts[0].clone()]].concat()),
    );
    let stray = Digest::of(b"stray");
    bad(
        "artifact-unlisted",
        "artifact_unlisted",
        "an artifact the manifest does not list",
        with(
            [
                vec![env()],
                artifacts.clone(),
                vec![Member::file(&format!("artifacts/{stray}"), b"stray".to_vec())],
            ]
            .concat(),
        ),
    );
    bad(
        "missing-artifact",
        "artifact_missing",
        "a listed artifact is absent",
        with([vec![env()], artifacts[1..].to_vec()].concat()),
    );
    let mut changed = artifacts.clone();
    changed[0].bytes[0] ^= 1;
    bad(
        "artifact-digest",
        "artifact_digest_mismatch",
        "an artifact's bytes do not match its digest",
        with([vec![env()], changed].concat()),
    );
    let mut m = base.manifest.clone();
    m["artifacts"][base.digests[0].as_str()]["size"] = json!(base.artifacts[0].len() + 1);
    bad(
        "artifact-size",
        "artifact_size_mismatch",
        "the manifest lists another size than the artifact has",
        base.signed(&pretty(&m), trusted, &artifacts),
    );

    let envelope_as = |value: Value| {
        with(
            [
                vec![Member::file("envelope.json", serde_json::to_vec(&value).expect("json"))],
                artifacts.clone(),
            ]
            .concat(),
        )
    };
    let signed: Value = serde_json::from_slice(&envelope).expect("an envelope");
    bad(
        "envelope-malformed",
        "envelope_malformed",
        "envelope.json is a string, not an envelope",
        envelope_as(json!("just a string")),
    );
    let mut e = signed.clone();
    e["payloadType"] = json!("application/json");
    bad("payload-type", "payload_type_mismatch", "the wrong payloadType", envelope_as(e));
    let mut e = signed.clone();
    e["payload"] = json!("!!! not base64 !!!");
    bad("payload-base64", "payload_not_base64", "a payload that is not base64", envelope_as(e));
    bad(
        "unknown-signer",
        "no_trusted_signature",
        "signed only by a key the verifier does not trust",
        base.signed(&manifest, stranger, &artifacts),
    );
    let mut e = signed.clone();
    let other: Value =
        serde_json::from_slice(&Envelope::sign(&manifest, &[stranger]).to_bytes()).expect("json");
    e["signatures"][0]["sig"] = other["signatures"][0]["sig"].clone();
    bad(
        "signature",
        "signature_invalid",
        "the trusted key's id with a signature that does not verify",
        envelope_as(e),
    );

    let limits = Limits::default();
    let mut huge = base.manifest.clone();
    huge["agent"]["display_name"] = json!(" ".repeat(limits.manifest as usize));
    let huge = pretty(&huge);
    let e = json!({"payloadType": crate::PAYLOAD_TYPE, "payload": base64_of(&huge), "signatures": []});
    bad("manifest-too-large", "manifest_too_large", "a manifest of more than 4 MiB", envelope_as(e));
    let padded = [envelope.clone(), vec![b' '; limits.envelope() as usize]].concat();
    bad(
        "envelope-too-large",
        "envelope_too_large",
        "an envelope larger than a 4 MiB manifest needs",
        with([vec![Member::file("envelope.json", padded)], artifacts.clone()].concat()),
    );
    let big = vec![b'x'; limits.artifact as usize + 1];
    let mut m = base.manifest.clone();
    let big_digest = Digest::of(&big).to_hex();
    m["artifacts"][big_digest.as_str()] = json!({"media_type": "text/plain", "size": big.len()});
    m["runs"][0]["artifacts"]["x-big"] = json!(big_digest);
    let members = [artifacts.clone(), vec![Member::file(&format!("artifacts/{big_digest}"), big)]].concat();
    bad(
        "artifact-too-large",
        "artifact_too_large",
        "an artifact of 64 MiB and one byte",
        base.signed(&pretty(&m), trusted, &members),
    );
    let mut raw = tar(&[vec![env()], artifacts].concat());
    raw.extend(std::iter::repeat_n(0u8, 16 << 20));
    bad(
        "unaccounted-data",
        "unaccounted_data",
        "16 MiB of zeros after the members the manifest lists",
        gzip(&raw),
    );
}

/// A small provenance record: a COGS run whose scorer read its data and whose output
/// `tee` wrote to the result file.
const PROVENANCE_EXAMPLE: &str = r#"{"schema":"rexbench.provenance/v1","tracer":"strace 6.1, seccomp-bpf","duration_ms":412,"results":["eval_results.txt"],"processes":[
{"id":1,"parent":null,"program":"/usr/bin/bash","argv":["bash","-c","bash -e run_final.sh | tee eval_results.txt"],"start_ms":0,"end_ms":410,"exit":"exit 0"},
{"id":2,"parent":1,"program":"/usr/bin/python3","argv":["python3","score.py"],"start_ms":5,"end_ms":400,"exit":"exit 0","read":["data/gen.tsv"],"pipes_out":[1]},
{"id":3,"parent":1,"program":"/usr/bin/tee","argv":["tee","eval_results.txt"],"start_ms":6,"end_ms":405,"exit":"exit 0","wrote":["eval_results.txt"],"pipes_in":[1]}
]}"#;

/// What a board marks of each valid submission vector's runs (see [`Expected::marks`]):
/// the base's first run states a cost and no tokens; the rest as [`Base::marked`] says.
fn marks_of(name: &str) -> Option<Vec<crate::RunMarks>> {
    let run = |task: &str, hint, attempt, marks: &[&str]| crate::RunMarks {
        task: task.into(),
        hint,
        attempt,
        marks: marks.iter().map(|m| (*m).to_owned()).collect(),
    };
    use crate::Hint::None as Unhinted;
    let first = run("cogs", Unhinted, 1, &["no-tokens"]);
    match name {
        "valid-basic.tar.gz"
        | "valid-two-signers.tar.gz"
        | "valid-findings.tar.gz"
        | "valid-sealed-metrics.tar.gz"
        | "valid-provenance.tar.gz" => Some(vec![first]),
        "valid-published.tar.gz" => Some(vec![]),
        "valid-marked.tar.gz" => Some(vec![
            run("cogs", Unhinted, 1, &["no-tokens", "copied-attempt"]),
            run("cogs", Unhinted, 2, &["implausible-tokens", "copied-attempt"]),
            run("othello", Unhinted, 1, &["unpriced"]),
        ]),
        _ => None,
    }
}

/// The manifest every vector starts from: two runs, three artifacts.
struct Base {
    manifest: Value,
    artifacts: Vec<Vec<u8>>,
    digests: Vec<String>,
}

impl Base {
    fn new() -> Base {
        let artifacts: Vec<Vec<u8>> = vec![
            b"--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr = 0.1\n+lr = 0.01\n".to_vec(),
            b"PRED ACC : 0.4562857142857143 (9582/21000)\n".to_vec(),
            b"agent: editing train.py\n".to_vec(),
        ];
        let digests: Vec<String> = artifacts.iter().map(|a| Digest::of(a).to_hex()).collect();
        let (p, s, l) = (&digests[0], &digests[1], &digests[2]);
        let manifest = json!({
            "schema": crate::SCHEMA,
            "created_at": "2026-11-20T12:00:00Z",
            "benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab".repeat(32)},
            "runner": {"name": "rexbench-runner", "version": "0.1.0"},
            "provenance": {"kind": "evaluated"},
            // An agent no real board has, so that a vector never meets a real agent's owner.
            "agent": {"id": "ref-agent", "framework": "RefFramework", "model": "RefModel",
                      "url": "https://example.org/agent"},
            "runs": [
                {"task": "cogs", "hint": "none", "attempt": 1, "outcome": "success", "file_recall": 0.5,
                 "files_changed": ["src/train.py"], "duration_s": 372.0, "cost_usd": 5.21,
                 "metrics": {"gen_accuracy": 0.4562857142857143},
                 "artifacts": {"patch": p, "stdout": s, "agent_log": l}},
                {"task": "othello", "hint": "detailed", "attempt": 1, "outcome": "execution_failed",
                 "error_type": "ValueError", "artifacts": {"patch": p}}
            ],
            "artifacts": {
                p: {"media_type": "text/plain", "size": artifacts[0].len()},
                s: {"media_type": "text/plain", "size": artifacts[1].len()},
                l: {"media_type": "text/plain", "size": artifacts[2].len()},
            }
        });
        Base { manifest, artifacts, digests }
    }

    /// The base manifest with two runs more, and the members that go with them: `cogs`
    /// attempt 2 unhinted, a success whose patch is the first's with a line before it and
    /// other spacing (one identity, spec §5b), with an agent log of its own and tokens
    /// that say its model wrote nothing; and `othello` attempt 1 unhinted, a failure whose
    /// tokens are `RefModel`'s, which no price table prices.
    fn marked(&self) -> (Vec<u8>, Vec<Member>) {
        let patch = b"A patch written otherwise\n--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr = 0.1\n+lr  =  0.01\n"
            .to_vec();
        let log = b"agent: editing train.py again\n".to_vec();
        let (p, l) = (Digest::of(&patch).to_hex(), Digest::of(&log).to_hex());
        let mut m = self.manifest.clone();
        let mut second = m["runs"][0].clone();
        second["attempt"] = json!(2);
        second["cost_usd"] = json!(0.5);
        second["tokens"] = json!({"input": 1000, "output": 0});
        second["artifacts"]["patch"] = json!(p);
        second["artifacts"]["agent_log"] = json!(l);
        let failed = json!({"task": "othello", "hint": "none", "attempt": 1, "outcome": "execution_failed",
                            "error_type": "ValueError", "cost_usd": 0.12,
                            "tokens": {"input": 5000, "output": 700},
                            "artifacts": {"patch": &self.digests[0]}});
        let runs = m["runs"].as_array_mut().expect("runs");
        runs.insert(1, second);
        runs.push(failed);
        for (digest, bytes) in [(&p, &patch), (&l, &log)] {
            m["artifacts"][digest] = json!({"media_type": "text/plain", "size": bytes.len()});
        }
        let mut members = self.members();
        members.push(Member::file(&format!("artifacts/{p}"), patch));
        members.push(Member::file(&format!("artifacts/{l}"), log));
        (pretty(&m), members)
    }

    /// The base manifest with `record` as the first run's `x-provenance` artifact, and
    /// the members that go with it.
    fn with_record(&self, record: &[u8]) -> (Vec<u8>, Vec<Member>) {
        let digest = Digest::of(record).to_hex();
        let mut m = self.manifest.clone();
        m["runs"][0]["artifacts"]["x-provenance"] = json!(digest);
        m["artifacts"][&digest] = json!({"media_type": "application/json", "size": record.len()});
        let mut members = self.members();
        members.push(Member::file(&format!("artifacts/{digest}"), record.to_vec()));
        (pretty(&m), members)
    }

    /// The base manifest with `n` findings on its first run, their words sealed into an
    /// x-findings artifact as `rexbench pack` does (salts from `key`); `swapped`: the
    /// artifact's first text is not the one its digest names.
    fn with_findings(&self, key: &SecretKey, n: usize, swapped: bool) -> (Vec<u8>, Vec<Member>) {
        let plain: Vec<crate::Finding> = serde_json::from_value(findings(n)).expect("findings parse");
        let mut i = 0u8;
        let (sealed, mut texts) = crate::seal(plain, || {
            i += 1;
            key.salt(&[i])
        });
        if swapped {
            texts.texts[0].text = "line 3 of the patch prints nothing".into();
        }
        let bytes = texts.to_bytes();
        let digest = Digest::of(&bytes).to_hex();
        let mut m = self.manifest.clone();
        m["runs"][0]["findings"] = serde_json::to_value(&sealed).expect("serializes");
        m["runs"][0]["artifacts"][crate::FINDINGS_ROLE] = json!(digest);
        m["artifacts"][&digest] = json!({"media_type": crate::FINDINGS_MEDIA_TYPE, "size": bytes.len()});
        let mut members = self.members();
        members.push(Member::file(&format!("artifacts/{digest}"), bytes));
        (pretty(&m), members)
    }

    /// The base manifest with its first run's metrics sealed into an x-metrics artifact
    /// as `rexbench pack` seals them (salt from `key`); `changed`: the artifact's value is
    /// not the one its digest names.
    fn with_sealed_metrics(&self, key: &SecretKey, changed: bool) -> (Vec<u8>, Vec<Member>) {
        let metrics: std::collections::BTreeMap<String, f64> =
            serde_json::from_value(self.manifest["runs"][0]["metrics"].clone()).expect("metrics parse");
        let (digest_of_values, mut text) =
            crate::seal_metrics(metrics, key.salt(b"metrics\ncogs\nnone\n1\n"));
        if changed {
            text.metrics.insert("gen_accuracy".into(), 0.5);
        }
        let bytes = text.to_bytes();
        let digest = Digest::of(&bytes).to_hex();
        let mut m = self.manifest.clone();
        m["runs"][0].as_object_mut().expect("a run").remove("metrics");
        m["runs"][0]["metrics_digest"] = json!(digest_of_values);
        m["runs"][0]["artifacts"][crate::METRICS_ROLE] = json!(digest);
        m["artifacts"][&digest] = json!({"media_type": crate::METRICS_MEDIA_TYPE, "size": bytes.len()});
        let mut members = self.members();
        members.push(Member::file(&format!("artifacts/{digest}"), bytes));
        (pretty(&m), members)
    }

    fn members(&self) -> Vec<Member> {
        self.artifacts
            .iter()
            .map(|a| Member::file(&format!("artifacts/{}", Digest::of(a)), a.clone()))
            .collect()
    }

    /// `manifest` signed by `key`, its envelope first, then `members`.
    fn signed(&self, manifest: &[u8], key: &SecretKey, members: &[Member]) -> Vec<u8> {
        let envelope = Member::file("envelope.json", Envelope::sign(manifest, &[key]).to_bytes());
        gzip(&tar(&[vec![envelope], members.to_vec()].concat()))
    }
}

#[derive(Clone)]
struct Member {
    path: String,
    bytes: Vec<u8>,
    kind: tar::EntryType,
}

impl Member {
    fn file(path: &str, bytes: Vec<u8>) -> Member {
        Member { path: path.to_owned(), bytes, kind: tar::EntryType::Regular }
    }
}

/// A ustar archive of `members` in order, any path included (which the tar crate's
/// own path setter rightly refuses for `..`).
fn tar(members: &[Member]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in members {
        let mut h = tar::Header::new_ustar();
        let name = &mut h.as_ustar_mut().expect("ustar").name;
        name[..m.path.len()].copy_from_slice(m.path.as_bytes());
        h.set_size(m.bytes.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_entry_type(m.kind);
        h.set_cksum();
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(&m.bytes);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.extend_from_slice(&[0; 1024]);
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(bytes).expect("in memory");
    e.finish().expect("in memory")
}

fn pretty(v: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(v).expect("serializes")
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
