//! Every rule of the spec, broken once, refused with its own code.

use std::collections::BTreeSet;
use std::io::{self, Read};

use bundle::{ArtifactInfo, ArtifactSink, BundleError, Digest, Envelope, Verifier};
use serde_json::{Value, json};

use crate::common::{Sample, code_of, gzip, header, sample, tar_of};

/// Signs a mutated copy of the sample manifest and returns the code it is refused with.
fn manifest_case(mutate: impl Fn(&mut Value)) -> &'static str {
    let s = sample();
    let mut m = s.manifest.clone();
    mutate(&mut m);
    code_of(&s.verifier(), &s.bundle_with(&serde_json::to_vec_pretty(&m).unwrap(), &s.members()))
}

fn envelope_case(mutate: impl Fn(&mut Value)) -> &'static str {
    let s = sample();
    let manifest = serde_json::to_vec(&s.manifest).unwrap();
    let mut env: Value = serde_json::to_value(Envelope::sign(&manifest, &[&s.key])).unwrap();
    mutate(&mut env);
    let mut members = vec![("envelope.json".to_owned(), serde_json::to_vec(&env).unwrap())];
    members.extend(s.members());
    code_of(&s.verifier(), &gzip(&tar_of(&members)))
}

fn members_case(s: &Sample, members: Vec<(String, Vec<u8>)>) -> &'static str {
    code_of(&s.verifier(), &s.bundle_with(&serde_json::to_vec(&s.manifest).unwrap(), &members))
}

fn envelope_member(s: &Sample) -> (String, Vec<u8>) {
    let manifest = serde_json::to_vec(&s.manifest).unwrap();
    ("envelope.json".to_owned(), Envelope::sign(&manifest, &[&s.key]).to_bytes())
}

fn run0(m: &mut Value) -> &mut Value {
    &mut m["runs"][0]
}

fn manifest_rules() -> Vec<(&'static str, &'static str)> {
    let patch = |m: &Value| m["runs"][0]["artifacts"]["patch"].as_str().unwrap().to_owned();
    vec![
        (manifest_case(|m| m["schema"] = json!("rexbench.manifest/v2")), "unsupported_schema"),
        (manifest_case(|m| m["created_at"] = json!("yesterday")), "invalid_created_at"),
        (manifest_case(|m| m["benchmark"]["version"] = json!("")), "invalid_benchmark"),
        (
            manifest_case(|m| m["benchmark"]["task_set_digest"] = json!("AB".repeat(32))),
            "invalid_task_set_digest",
        ),
        (manifest_case(|m| m["runner"]["name"] = json!("")), "invalid_runner"),
        (manifest_case(|m| m["provenance"]["kind"] = json!("imagined")), "invalid_provenance"),
        (manifest_case(|m| m["provenance"] = json!({"kind": "published"})), "provenance_source_missing"),
        (
            manifest_case(|m| m["provenance"] = json!({"kind": "published", "source": "Table 11"})),
            "published_run_has_artifacts",
        ),
        (manifest_case(|m| m["agent"]["id"] = json!("OpenHands/Claude")), "invalid_agent_id"),
        (manifest_case(|m| m["agent"]["model"] = json!("x".repeat(101))), "invalid_agent_field"),
        (manifest_case(|m| m["agent"]["url"] = json!("javascript:alert(1)")), "invalid_agent_url"),
        // Spec §4o: the board's badges, however spelt, in any free-text field of the agent.
        (manifest_case(|m| m["agent"]["display_name"] = json!("✔ Verified · Paper")), "agent_badge_words"),
        (manifest_case(|m| m["agent"]["framework"] = json!("Self\u{200b}-Reported")), "agent_badge_words"),
        (manifest_case(|m| m["agent"]["model"] = json!("Ｍａｉｎｔａｉｎｅｒｓ")), "agent_badge_words"),
        (manifest_case(|m| m["agent"]["model_id"] = json!("v\u{0435}rified-1")), "agent_badge_words"),
        // A review's (issue 75): the agent's id, a run's error type and an import's source
        // are shown beside the badges too.
        (manifest_case(|m| m["agent"]["id"] = json!("maintainers-verified")), "agent_badge_words"),
        (
            manifest_case(|m| m["runs"][1]["error_type"] = json!("✔ Verified by maintainers")),
            "agent_badge_words",
        ),
        (
            manifest_case(|m| {
                m["provenance"] = json!({"kind": "imported", "source": "✔ Verified · Maintainers"});
            }),
            "agent_badge_words",
        ),
        (manifest_case(|m| m["runs"] = json!([])), "run_count_out_of_range"),
        (
            manifest_case(|m| {
                let first = m["runs"][0].clone();
                m["runs"].as_array_mut().unwrap().push(first);
            }),
            "duplicate_run",
        ),
        (manifest_case(|m| run0(m)["task"] = json!("winodict")), "unknown_task"),
        (manifest_case(|m| run0(m)["hint"] = json!("level1")), "invalid_hint"),
        (manifest_case(|m| run0(m)["attempt"] = json!(0)), "invalid_attempt"),
        (manifest_case(|m| run0(m)["attempt"] = json!(-1)), "invalid_attempt"),
        // A failing attempt left out before signing (spec §4f): 1 and 3, no 2.
        (
            manifest_case(|m| {
                let mut third = m["runs"][0].clone();
                third["attempt"] = json!(3);
                m["runs"].as_array_mut().unwrap().push(third);
            }),
            "attempt_gap",
        ),
        (manifest_case(|m| run0(m)["attempt"] = json!(2)), "attempt_gap"),
        (manifest_case(|m| m["created_at"] = json!("2999-01-01T00:00:00Z")), "created_at_in_future"),
        (manifest_case(|m| run0(m)["outcome"] = json!("partial_success")), "invalid_outcome"),
        (manifest_case(|m| run0(m)["regraded"] = json!({"from": "partial_success"})), "invalid_regrade"),
        (manifest_case(|m| run0(m)["regraded"] = json!("wrong_result")), "invalid_regrade"),
        (manifest_case(|m| run0(m)["regraded"] = json!({})), "invalid_regrade"),
        (
            manifest_case(|m| run0(m)["regraded"] = json!({"from": "wrong_result", "by": "x"})),
            "unknown_field",
        ),
        (manifest_case(|m| run0(m)["error_type"] = json!("E".repeat(101))), "invalid_error_type"),
        (manifest_case(|m| run0(m)["file_recall"] = json!(1.5)), "invalid_file_recall"),
        (manifest_case(|m| run0(m)["file_recall"] = json!(-0.1)), "invalid_file_recall"),
        (manifest_case(|m| run0(m)["files_changed"] = json!(["../../etc/passwd"])), "invalid_files_changed"),
        (manifest_case(|m| run0(m)["duration_s"] = json!(-3.0)), "invalid_number"),
        (manifest_case(|m| run0(m)["cost_usd"] = json!(-0.01)), "invalid_number"),
        // Section 4m: tokens are whole numbers up to 10^12, of four known kinds.
        (
            manifest_case(|m| run0(m)["tokens"] = json!({"input": 1_000_000_000_001_u64, "output": 1})),
            "invalid_number",
        ),
        (manifest_case(|m| run0(m)["tokens"] = json!({"input": -1, "output": 1})), "manifest_malformed"),
        (manifest_case(|m| run0(m)["tokens"] = json!({"input": 1.5, "output": 1})), "manifest_malformed"),
        (manifest_case(|m| run0(m)["tokens"] = json!({"input": 1})), "manifest_malformed"),
        (
            manifest_case(|m| run0(m)["tokens"] = json!({"input": 1, "output": 1, "reasoning": 5})),
            "unknown_field",
        ),
        // Section 4n: a task folder is a Harbor digest or checksum, and one per task.
        (manifest_case(|m| run0(m)["task_folder"] = json!("SHA256:abc")), "manifest_malformed"),
        (
            manifest_case(|m| run0(m)["task_folder"] = json!(format!("sha256:{}", "a".repeat(63)))),
            "manifest_malformed",
        ),
        (manifest_case(|m| run0(m)["task_folder"] = json!("f".repeat(129))), "manifest_malformed"),
        (
            manifest_case(|m| {
                let patch = m["runs"][0]["artifacts"]["patch"].clone();
                run0(m)["task_folder"] = json!("0123abcd");
                m["runs"].as_array_mut().unwrap().push(json!({
                    "task": "cogs", "hint": "hints", "attempt": 1, "outcome": "wrong_result",
                    "artifacts": {"patch": patch}, "task_folder": "0123abce",
                }));
            }),
            "task_folder_split",
        ),
        (
            manifest_case(|m| {
                let patch = m["runs"][0]["artifacts"]["patch"].clone();
                run0(m)["task_folder"] = json!("0123abcd");
                m["runs"].as_array_mut().unwrap().push(json!({
                    "task": "cogs", "hint": "hints", "attempt": 1, "outcome": "wrong_result",
                    "artifacts": {"patch": patch},
                }));
            }),
            "task_folder_split",
        ),
        (manifest_case(|m| run0(m)["metrics"] = json!({"": 1.0})), "invalid_metric"),
        (
            manifest_case(|m| {
                let p = patch(m);
                run0(m)["artifacts"]["screenshot"] = json!(p);
            }),
            "invalid_artifact_role",
        ),
        (manifest_case(|m| run0(m)["artifacts"]["x-trace"] = json!("not-a-digest")), "invalid_digest"),
        (
            manifest_case(|m| run0(m)["artifacts"]["x-trace"] = json!(Digest::of(b"elsewhere").to_hex())),
            "artifact_not_listed",
        ),
        (
            manifest_case(|m| {
                m["artifacts"][Digest::of(b"spare").to_hex()] =
                    json!({"media_type": "text/plain", "size": 5});
            }),
            "artifact_unused",
        ),
        (
            manifest_case(|m| {
                let p = patch(m);
                m["artifacts"][p]["media_type"] = json!("diff");
            }),
            "invalid_media_type",
        ),
        (manifest_case(|m| run0(m)["findings"] = findings(33)), "too_many_findings"),
        (
            manifest_case(|m| run0(m)["findings"] = json!([{"check": "Result_Line", "message": "m"}])),
            "invalid_finding_check",
        ),
        (
            manifest_case(|m| run0(m)["findings"] = json!([{"check": "-lead", "message": "m"}])),
            "invalid_finding_check",
        ),
        (
            manifest_case(|m| run0(m)["findings"] = json!([{"check": "x".repeat(65), "message": "m"}])),
            "invalid_finding_check",
        ),
        (
            manifest_case(|m| run0(m)["findings"] = json!([{"check": "c", "message": ""}])),
            "invalid_finding_message",
        ),
        (
            manifest_case(|m| run0(m)["findings"] = json!([{"check": "c", "message": "é".repeat(501)}])),
            "invalid_finding_message",
        ),
        (
            manifest_case(|m| {
                run0(m)["findings"] = json!([{"check": "c", "message": "m", "artifact": "checker_log"}])
            }),
            "finding_unknown_artifact",
        ),
        (
            manifest_case(|m| {
                run0(m)["findings"] = json!([{"check": "c", "message": "m", "artifact": "patch", "line": 0}])
            }),
            "invalid_finding_line",
        ),
        (
            manifest_case(|m| run0(m)["findings"] = json!([{"check": "c", "message": "m", "line": 3}])),
            "invalid_finding_line",
        ),
        (
            manifest_case(|m| {
                let f = json!({"check": "c", "message": "m", "artifact": "patch", "line": 2});
                run0(m)["findings"] = json!([f.clone(), {"check": "c", "message": "other words", "artifact": "patch", "line": 2}]);
            }),
            "duplicate_finding",
        ),
        (
            manifest_case(|m| {
                run0(m)["findings"] = json!([{"check": "c", "message": "m"}, {"check": "c", "message": "n"}])
            }),
            "duplicate_finding",
        ),
        (
            manifest_case(|m| run0(m)["findings"] = json!([{"check": "c", "message": "m", "weight": 1}])),
            "unknown_field",
        ),
        (manifest_case(|m| m["agent"]["nickname"] = json!("x")), "unknown_field"),
        (manifest_case(|m| run0(m)["score"] = json!(1)), "unknown_field"),
        (manifest_case(|m| m["runs"][0]["attempt"] = json!("one")), "invalid_attempt"),
        (manifest_case(|m| m["agent"]["framework"] = json!(7)), "manifest_malformed"),
        (manifest_case(|m| m["runs"] = json!({})), "manifest_malformed"),
        (
            manifest_case(|m| {
                run0(m)["artifacts"].as_object_mut().unwrap().remove("patch");
            }),
            "evidence_missing",
        ),
        (
            // A provenance record listed as another type.
            manifest_case(|m| {
                let p = m["runs"][0]["artifacts"]["stdout"].clone();
                run0(m)["artifacts"]["x-provenance"] = p;
            }),
            "invalid_provenance_record",
        ),
        (
            // A reproduction (section 4d) that names no bundle it re-ran.
            manifest_case(|m| {
                reproduction(m);
                m["reproduction"]["of"] = json!("ab");
            }),
            "invalid_reproduction",
        ),
    ]
}

/// The sample manifest as a reproduction of another bundle's runs.
fn reproduction(m: &mut Value) {
    m["reproduction"] = json!({"of": "cd".repeat(32), "executor": "local",
        "hardware": {"cpus": 2, "memory_bytes": 1_u64 << 34, "gpus": 0, "description": "2 CPUs, 16 GiB"}});
    for run in m["runs"].as_array_mut().unwrap() {
        run["duration_s"] = json!(10.0);
    }
}

/// A held-out re-run of the manifest's first run, with `changes` made to it.
fn heldout(m: &mut Value, changes: Value) {
    let run = run0(m).clone();
    let mut h = json!({"task": run["task"], "hint": run["hint"], "attempt": run["attempt"],
        "variant": "ef".repeat(32), "generalised": false});
    for (k, v) in changes.as_object().unwrap() {
        h[k] = v.clone();
    }
    m["reproduction"]["heldout"] = json!([h]);
}

/// Section 4d: a reproduction is held to each of its rules, and its error says which.
#[test]
fn a_reproduction_says_what_it_reran_where_and_on_what() {
    let cases: Vec<(Box<dyn Fn(&mut Value)>, Option<&str>)> = vec![
        (Box::new(|_| {}), None),
        (Box::new(|m| m["reproduction"]["executor"] = json!("cloud")), Some("executor \"cloud\"")),
        (
            Box::new(|m| m["reproduction"]["hardware"]["description"] = json!("")),
            Some("hardware.description"),
        ),
        (
            Box::new(|m| m["reproduction"]["hardware"]["gpu_model"] = json!("x".repeat(201))),
            Some("hardware.gpu_model"),
        ),
        // A re-run the runner could not complete is a try (spec §4d), re-run on no variant.
        (Box::new(|m| run0(m)["outcome"] = json!("infra_error")), None),
        (
            Box::new(|m| {
                run0(m)["outcome"] = json!("infra_error");
                heldout(m, json!({}));
            }),
            Some("runs[0] (task cogs"),
        ),
        (
            Box::new(|m| m["provenance"] = json!({"kind": "published", "source": "paper"})),
            Some("provenance.kind is `published`"),
        ),
        // Section 4l: each held-out re-run is of one of its runs, once, on a variant named
        // by its digest, and shows something either way.
        (Box::new(|m| heldout(m, json!({}))), None),
        (Box::new(|m| heldout(m, json!({"task": "othello"}))), Some("names no run of this reproduction")),
        (Box::new(|m| heldout(m, json!({"variant": "AB".repeat(32)}))), Some("`variant` must be a digest")),
        // One bit is told of it: its outcome or its duration would be a channel out.
        (
            Box::new(|m| heldout(m, json!({"outcome": "wrong_result"}))),
            Some("reproduction.heldout[0].outcome"),
        ),
        (Box::new(|m| heldout(m, json!({"duration_s": 3.5}))), Some("reproduction.heldout[0].duration_s")),
        (
            Box::new(|m| {
                heldout(m, json!({}));
                let again = m["reproduction"]["heldout"][0].clone();
                m["reproduction"]["heldout"].as_array_mut().unwrap().push(again);
            }),
            Some("has a held-out re-run already"),
        ),
    ];
    for (mutate, refused) in cases {
        let s = sample();
        let mut m = s.manifest.clone();
        reproduction(&mut m);
        mutate(&mut m);
        let bytes = s.bundle_with(&serde_json::to_vec_pretty(&m).unwrap(), &s.members());
        match (s.verifier().verify(bytes.as_slice()), refused) {
            (Ok(v), None) => assert!(v.manifest.reproduction.is_some()),
            (Err(e), Some(said)) if ["invalid_reproduction", "unknown_field"].contains(&e.code()) => {
                assert!(e.to_string().contains(said), "{e}")
            }
            (got, want) => panic!("{got:?} where {want:?} was due"),
        }
    }
}

/// Section 4c: only what had to be there is asked for. An imported run is not refused
/// for a missing patch (the server flags it), nor is a run that never got past applying.
#[test]
fn evidence_is_asked_only_where_the_runner_had_it() {
    for mutate in [
        Box::new(|m: &mut Value| {
            m["provenance"] = json!({"kind": "imported", "source": "harbor 0.26.0, job j"});
            run0(m)["artifacts"].as_object_mut().unwrap().remove("patch");
        }) as Box<dyn Fn(&mut Value)>,
        Box::new(|m: &mut Value| {
            run0(m)["outcome"] = json!("patch_failed");
            run0(m)["artifacts"].as_object_mut().unwrap().remove("patch");
        }),
    ] {
        let s = sample();
        let mut m = s.manifest.clone();
        mutate(&mut m);
        let bytes = s.bundle_with(&serde_json::to_vec_pretty(&m).unwrap(), &s.members());
        s.verifier().verify(bytes.as_slice()).unwrap_or_else(|e| panic!("refused: {e}"));
    }
}

/// Section 4b: a provenance record is read whole and held to its rules; the error names
/// the run and the field.
#[test]
fn provenance_records_are_read_and_checked() {
    let good = bundle::ProvenanceRecord::untraced("no tracer on this node", 5).to_bytes();
    let outside = br#"{"schema":"rexbench.provenance/v1","tracer":"t","duration_ms":1,"processes":[
{"id":1,"parent":null,"program":"p","start_ms":0,"end_ms":1,"exit":"exit 0","read":["/etc/passwd"]}
]}"#
    .to_vec();
    for (record, refused) in
        [(good, None), (outside, Some("processes[0].read[0]")), (b"{}".to_vec(), Some("schema"))]
    {
        let s = sample();
        let digest = Digest::of(&record).to_hex();
        let mut m = s.manifest.clone();
        run0(&mut m)["artifacts"]["x-provenance"] = json!(digest);
        m["artifacts"][&digest] = json!({"media_type": "application/json", "size": record.len()});
        let mut members = s.members();
        members.push((format!("artifacts/{digest}"), record));
        let bytes = s.bundle_with(&serde_json::to_vec_pretty(&m).unwrap(), &members);
        match (s.verifier().verify(bytes.as_slice()), refused) {
            (Ok(_), None) => {}
            (Err(e), Some(field)) => {
                assert_eq!(e.code(), "invalid_provenance_record");
                let said = e.to_string();
                assert!(said.contains("runs[0] (task cogs") && said.contains(field), "{said}");
            }
            (got, want) => panic!("{got:?} where {want:?} was due"),
        }
    }
}

#[test]
fn manifest_rules_each_have_their_code() {
    for (got, want) in manifest_rules() {
        assert_eq!(got, want);
    }
}

#[test]
fn a_key_twice_in_a_signed_object_is_refused() {
    // serde_json would keep the last value; another parser might keep the first.
    let s = sample();
    let text = serde_json::to_string_pretty(&s.manifest).unwrap();
    let doubled = text.replacen(
        "\"gen_accuracy\": 0.4562857142857143",
        "\"gen_accuracy\": 1.0, \"gen_accuracy\": 0.1",
        1,
    );
    assert_ne!(text, doubled);
    let err = s.verifier().verify(s.bundle_with(doubled.as_bytes(), &s.members()).as_slice()).unwrap_err();
    assert_eq!(err.code(), "manifest_malformed");
    assert!(err.to_string().contains("duplicate key `gen_accuracy`"), "{err}");
}

#[test]
fn unknown_fields_are_named_by_their_path() {
    type Mutation = fn(&mut Value);
    let cases: [(Mutation, &str); 3] = [
        (|m: &mut Value| m["agent"]["nickname"] = json!("x"), "agent.nickname"),
        (|m: &mut Value| m["runs"][1]["score"] = json!(1), "runs[1].score"),
        (|m: &mut Value| m["signed_by"] = json!("me"), "signed_by"),
    ];
    for (mutate, path) in cases {
        let s = sample();
        let mut m = s.manifest.clone();
        mutate(&mut m);
        let bytes = s.bundle_with(&serde_json::to_vec(&m).unwrap(), &s.members());
        let err = s.verifier().verify(bytes.as_slice()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("the manifest has a field `{path}` that schema v1 does not define")
        );
    }
}

#[test]
fn errors_name_the_run_and_the_value() {
    let s = sample();
    let mut m = s.manifest.clone();
    m["runs"][1]["hint"] = json!("level1");
    let err = s
        .verifier()
        .verify(s.bundle_with(&serde_json::to_vec(&m).unwrap(), &s.members()).as_slice())
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("runs[1]") && text.contains("level1"), "{text}");

    let mut m = s.manifest.clone();
    m["runs"][1]["file_recall"] = json!(2.0);
    let err = s
        .verifier()
        .verify(s.bundle_with(&serde_json::to_vec(&m).unwrap(), &s.members()).as_slice())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "runs[1] (task othello, hint detailed, attempt 1): file_recall 2 is outside [0, 1]"
    );
}

#[test]
fn envelope_rules_each_have_their_code() {
    assert_eq!(envelope_case(|e| e["payloadType"] = json!("application/json")), "payload_type_mismatch");
    assert_eq!(envelope_case(|e| e["payload"] = json!("not base64!")), "payload_not_base64");
    assert_eq!(envelope_case(|e| e["signatures"] = json!([])), "no_trusted_signature");
    assert_eq!(envelope_case(|e| e["extra"] = json!(1)), "envelope_malformed");
    assert_eq!(envelope_case(|e| *e = json!("just a string")), "envelope_malformed");
    assert_eq!(envelope_case(|e| e["signatures"][0]["sig"] = json!("AAAA")), "signature_invalid");
    // A trusted keyid whose signature covers other bytes is tampering.
    assert_eq!(
        envelope_case(|e| {
            let sig = e["signatures"][0]["sig"].as_str().unwrap().to_owned();
            let mut bytes: Vec<char> = sig.chars().collect();
            bytes[10] = if bytes[10] == 'A' { 'B' } else { 'A' };
            e["signatures"][0]["sig"] = json!(bytes.into_iter().collect::<String>());
        }),
        "signature_invalid"
    );
}

#[test]
fn archive_rules_each_have_their_code() {
    let s = sample();
    let env = envelope_member(&s);
    let arts = s.members();
    let v = s.verifier();

    assert_eq!(code_of(&v, b"PK\x03\x04 this is a zip"), "not_gzip");
    assert_eq!(code_of(&v, b""), "not_gzip");
    let good = s.bundle();
    assert_eq!(code_of(&v, &good[..good.len() / 2]), "corrupt_archive");
    let mut trailing = good.clone();
    trailing.extend_from_slice(b"more");
    assert_eq!(code_of(&v, &trailing), "corrupt_archive");
    assert_eq!(code_of(&v, &gzip(&tar_of(&[]))), "envelope_missing");
    assert_eq!(code_of(&v, &gzip(b"not a tar archive at all, just text")), "corrupt_archive");

    let mut reordered = arts.clone();
    reordered.insert(1, env.clone());
    assert_eq!(code_of(&v, &gzip(&tar_of(&reordered))), "envelope_not_first");
    assert_eq!(
        members_case(&s, [arts.clone(), vec![("../escape".into(), b"x".to_vec())]].concat()),
        "unsafe_path"
    );
    assert_eq!(
        members_case(&s, [arts.clone(), vec![("/etc/passwd".into(), b"x".to_vec())]].concat()),
        "unsafe_path"
    );
    assert_eq!(
        members_case(&s, [arts.clone(), vec![("notes.txt".into(), b"x".to_vec())]].concat()),
        "unexpected_member"
    );
    assert_eq!(
        members_case(&s, [arts.clone(), vec![("artifacts/ABC".into(), b"x".to_vec())]].concat()),
        "unexpected_member"
    );
    assert_eq!(members_case(&s, [arts.clone(), vec![arts[0].clone()]].concat()), "duplicate_member");
    assert_eq!(members_case(&s, [arts.clone(), vec![env.clone()]].concat()), "duplicate_member");
    let stray = b"not listed".to_vec();
    assert_eq!(
        members_case(&s, [arts.clone(), vec![(format!("artifacts/{}", Digest::of(&stray)), stray)]].concat()),
        "artifact_unlisted"
    );
    assert_eq!(members_case(&s, arts[1..].to_vec()), "artifact_missing");
    // Bytes that do not hash to their name, whether longer, shorter or altered.
    let (name, data) = arts[0].clone();
    for changed in [[data.as_slice(), b"\n"].concat(), data[..data.len() - 1].to_vec(), {
        let mut d = data.clone();
        d[0] ^= 1;
        d
    }] {
        let members = vec![(name.clone(), changed), arts[1].clone(), arts[2].clone()];
        assert_eq!(members_case(&s, members), "artifact_digest_mismatch");
    }
    // The right bytes, but the manifest lists another size.
    let mut m = s.manifest.clone();
    let digest = name.strip_prefix("artifacts/").unwrap();
    m["artifacts"][digest]["size"] = serde_json::json!(data.len() + 1);
    let bytes = s.bundle_with(&serde_json::to_vec(&m).unwrap(), &arts);
    assert_eq!(code_of(&v, &bytes), "artifact_size_mismatch");

    // Links, directories and devices are not files.
    for (kind, path) in [
        (tar::EntryType::Symlink, "artifacts/link"),
        (tar::EntryType::Link, "artifacts/hard"),
        (tar::EntryType::Directory, "artifacts/sub/"),
        (tar::EntryType::Fifo, "fifo"),
    ] {
        let mut b = tar::Builder::new(Vec::new());
        b.append(&header(&env.0, env.1.len() as u64, tar::EntryType::Regular), env.1.as_slice()).unwrap();
        let mut h = header(path, 0, kind);
        if matches!(kind, tar::EntryType::Symlink | tar::EntryType::Link) {
            h.set_link_name("/etc/passwd").unwrap();
            h.set_cksum();
        }
        b.append(&h, io::empty()).unwrap();
        let code = code_of(&v, &gzip(&b.into_inner().unwrap()));
        assert_eq!(code, "non_regular_member", "{kind:?}");
    }
}

#[test]
fn the_artifacts_directory_entry_is_tolerated() {
    let s = sample();
    let mut b = tar::Builder::new(Vec::new());
    let env = envelope_member(&s);
    b.append(&header(&env.0, env.1.len() as u64, tar::EntryType::Regular), env.1.as_slice()).unwrap();
    b.append(&header("artifacts/", 0, tar::EntryType::Directory), io::empty()).unwrap();
    for (name, data) in s.members() {
        b.append(&header(&name, data.len() as u64, tar::EntryType::Regular), data.as_slice()).unwrap();
    }
    s.verifier().verify(gzip(&b.into_inner().unwrap()).as_slice()).unwrap();
}

#[test]
fn pax_headers_are_understood() {
    // A pax `path` record names the member, as `tar --format=pax` may write it.
    let s = sample();
    let env = envelope_member(&s);
    let mut b = tar::Builder::new(Vec::new());
    b.append(&header(&env.0, env.1.len() as u64, tar::EntryType::Regular), env.1.as_slice()).unwrap();
    for (name, data) in s.members() {
        let record = format!("path={name}\n");
        let record = format!("{} {record}", record.len() + 1 + (record.len() + 3).to_string().len());
        let record = record.into_bytes();
        b.append(&header("PaxHeader", record.len() as u64, tar::EntryType::XHeader), record.as_slice())
            .unwrap();
        b.append(&header("placeholder", data.len() as u64, tar::EntryType::Regular), data.as_slice())
            .unwrap();
    }
    s.verifier().verify(gzip(&b.into_inner().unwrap()).as_slice()).unwrap();
}

#[test]
fn unknown_tasks_are_judged_by_the_verifier_s_task_list() {
    let s = sample();
    let bytes = s.bundle();
    assert_eq!(code_of(&Verifier::new(vec![s.key.public_key()], ["cogs"]), &bytes), "unknown_task");
    Verifier::new(vec![s.key.public_key()], bundle::REXBENCH_TASKS).verify(bytes.as_slice()).unwrap();
}

#[test]
fn io_failures_are_not_blamed_on_the_bundle() {
    struct Broken<'a>(&'a [u8]);
    impl Read for Broken<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.len() < 200 {
                return Err(io::Error::new(io::ErrorKind::ConnectionReset, "peer went away"));
            }
            let len = buf.len().min(100);
            self.0.read(&mut buf[..len])
        }
    }
    let s = sample();
    let bytes = s.bundle();
    let err = s.verifier().verify(Broken(&bytes)).unwrap_err();
    assert_eq!(err.code(), "io_error", "{err}");
    assert!(err.to_string().contains("peer went away"), "{err}");
}

#[test]
fn a_failing_sink_is_reported_as_such() {
    struct Full;
    impl ArtifactSink for Full {
        fn artifact(&mut self, _: &Digest, _: &ArtifactInfo, _: &mut dyn Read) -> io::Result<()> {
            Err(io::Error::new(io::ErrorKind::StorageFull, "no space left on device"))
        }
    }
    struct Broken;
    impl ArtifactSink for Broken {
        fn artifact(&mut self, _: &Digest, _: &ArtifactInfo, _: &mut dyn Read) -> io::Result<()> {
            Err(io::Error::new(io::ErrorKind::PermissionDenied, "read-only file system"))
        }
    }
    let s = sample();
    let err = s.verifier().verify_into(s.bundle().as_slice(), &mut Full).unwrap_err();
    assert_eq!(err.code(), "storage_full");
    assert_eq!(err.class(), bundle::ErrorClass::Io);
    let err = s.verifier().verify_into(s.bundle().as_slice(), &mut Broken).unwrap_err();
    assert_eq!(err.code(), "artifact_store_failed");
    assert!(err.to_string().contains("read-only file system"), "{err}");
}

/// `n` distinct findings, as a run may carry 32 of.
fn findings(n: usize) -> Value {
    Value::Array((0..n).map(|i| json!({"check": format!("check-{i}"), "message": "seen"})).collect())
}

/// Findings at the limits are accepted: 32 of them, a 64-character check, words of 500
/// characters, and the same check at two lines or in two artifacts; their words come
/// back from x-findings as the runner wrote them.
#[test]
fn findings_at_the_limits_are_accepted() {
    for findings in [
        findings(32),
        json!([
            {"check": format!("a{}", "-".repeat(63)), "message": "é".repeat(500)},
            {"check": "c", "message": "m", "artifact": "patch", "line": 1},
            {"check": "c", "message": "m", "artifact": "patch", "line": 2},
            {"check": "c", "message": "m", "artifact": "stdout", "line": 2},
            {"check": "c", "message": "m", "artifact": "patch"},
        ]),
    ] {
        let s = sample();
        let (m, members) = s.sealed(s.manifest.clone(), findings.clone(), |_| {});
        let bytes = s.bundle_with(&serde_json::to_vec_pretty(&m).unwrap(), &members);
        let verified = s.verifier().verify(bytes.as_slice()).unwrap_or_else(|e| panic!("refused: {e}"));
        let given = findings.as_array().unwrap();
        assert_eq!(verified.manifest.runs[0].findings.len(), given.len());
        assert!(verified.manifest.runs[0].findings.iter().all(|f| f.message == bundle::SEE_TEXT));
        let words: Vec<String> = verified.findings_of(0).into_iter().map(|f| f.message).collect();
        let want: Vec<String> = given.iter().map(|f| f["message"].as_str().unwrap().to_owned()).collect();
        assert_eq!(words, want);
    }
}

/// Spec §4g: words in the manifest, and words that are not the manifest's, are refused.
#[test]
fn findings_words_live_in_x_findings_and_match_their_digests() {
    let s = sample();
    let words = json!([{"check": "c", "message": "prints `acc: 0.91`", "artifact": "patch", "line": 1}]);
    let case = |m: Value, members: Vec<(String, Vec<u8>)>| {
        let bytes = s.bundle_with(&serde_json::to_vec_pretty(&m).unwrap(), &members);
        s.verifier()
            .verify(bytes.as_slice())
            .err()
            .unwrap_or_else(|| panic!("accepted: {}", m["runs"][0]["findings"]))
    };
    // The words in the manifest, as before: refused, naming the run and the finding.
    let mut quoted = s.manifest.clone();
    run0(&mut quoted)["findings"] = words.clone();
    let e = case(quoted, s.members());
    assert_eq!(e.code(), "finding_text_in_manifest");
    assert!(e.to_string().contains("findings[0]") && e.to_string().contains("cogs"), "{e}");
    // Sealed, then a message put back, or the digest dropped or not hex.
    for (edit, code) in [
        (
            Box::new(|m: &mut Value| run0(m)["findings"][0]["message"] = json!("prints `acc: 0.91`"))
                as Box<dyn Fn(&mut Value)>,
            "finding_text_in_manifest",
        ),
        (
            Box::new(|m: &mut Value| {
                run0(m)["findings"][0].as_object_mut().unwrap().remove("text_digest");
            }),
            "finding_text_in_manifest",
        ),
        (
            Box::new(|m: &mut Value| run0(m)["findings"][0]["text_digest"] = json!("AB".repeat(32))),
            "finding_text_in_manifest",
        ),
        // No x-findings for a run with findings; one for a run without.
        (
            Box::new(|m: &mut Value| {
                run0(m)["artifacts"].as_object_mut().unwrap().remove(bundle::FINDINGS_ROLE);
            }),
            "invalid_finding_text",
        ),
        (
            Box::new(|m: &mut Value| {
                run0(m)["findings"] = json!([]);
            }),
            "invalid_finding_text",
        ),
    ] {
        let (mut m, members) = s.sealed(s.manifest.clone(), words.clone(), |_| {});
        edit(&mut m);
        let got = case(m, members).code();
        // An x-findings no run names is also an unused artifact: either says what is wrong.
        assert!(
            got == code || (code == "invalid_finding_text" && got == "artifact_unused"),
            "{got} for {code}"
        );
    }
    // The artifact's words are not the ones the digest names; one text too many; not JSON.
    for texts in [
        Box::new(|t: &mut bundle::FindingsText| t.texts[0].text = "prints nothing".into())
            as Box<dyn Fn(&mut bundle::FindingsText)>,
        Box::new(|t: &mut bundle::FindingsText| t.texts.push(t.texts[0].clone())),
        Box::new(|t: &mut bundle::FindingsText| t.schema = "rexbench.findings/v0".into()),
    ] {
        let (m, members) = s.sealed(s.manifest.clone(), words.clone(), texts);
        let e = case(m, members);
        assert_eq!(e.code(), "invalid_finding_text", "{e}");
        assert!(e.to_string().contains("x-findings"), "{e}");
    }
    // The media type is JSON's.
    let (mut m, members) = s.sealed(s.manifest.clone(), words.clone(), |_| {});
    let digest = m["runs"][0]["artifacts"][bundle::FINDINGS_ROLE].as_str().unwrap().to_owned();
    m["artifacts"][&digest]["media_type"] = json!("text/plain");
    assert_eq!(case(m, members).code(), "invalid_finding_text");
}

/// Spec §4j: run 0's metrics sealed as `rexbench pack` seals a private check's, the
/// x-metrics artifact as `edit` leaves it; the manifest and its members.
fn sealed_metrics(
    s: &Sample,
    edit: impl FnOnce(&mut bundle::MetricsText),
) -> (Value, Vec<(String, Vec<u8>)>) {
    let metrics = serde_json::from_value(s.manifest["runs"][0]["metrics"].clone()).unwrap();
    let (digest_of_values, mut text) = bundle::seal_metrics(metrics, [9; 16]);
    edit(&mut text);
    let bytes = text.to_bytes();
    let digest = Digest::of(&bytes).to_hex();
    let mut m = s.manifest.clone();
    run0(&mut m).as_object_mut().unwrap().remove("metrics");
    run0(&mut m)["metrics_digest"] = json!(digest_of_values);
    run0(&mut m)["artifacts"][bundle::METRICS_ROLE] = json!(digest);
    m["artifacts"][&digest] = json!({"media_type": bundle::METRICS_MEDIA_TYPE, "size": bytes.len()});
    let mut members = s.members();
    members.push((format!("artifacts/{digest}"), bytes));
    (m, members)
}

/// Spec §4j: a private check's metrics are sealed, read back as they were, and refused
/// in the manifest; sealed metrics that are not the digest's, or half there, refused.
#[test]
fn a_private_checks_metrics_are_sealed_and_read_back() {
    let s = sample();
    let verify = |m: &Value, members: &[(String, Vec<u8>)], verifier: &Verifier| {
        verifier.verify(s.bundle_with(&serde_json::to_vec_pretty(m).unwrap(), members).as_slice())
    };
    let (m, members) = sealed_metrics(&s, |_| {});
    let verified = verify(&m, &members, &s.verifier()).unwrap();
    assert_eq!(verified.metrics_of(0), [("gen_accuracy".to_owned(), 0.4562857142857143)].into());
    assert!(verified.manifest.runs[0].metrics.is_empty());
    assert!(!String::from_utf8_lossy(&verified.manifest_bytes).contains("0.456"));
    // A verifier told that cogs's check is private refuses the metrics in the manifest,
    // naming the run and the task, and takes them sealed.
    let private = s.verifier().with_private_checks(["cogs"]);
    let e = verify(&s.manifest, &s.members(), &private).unwrap_err();
    assert_eq!(e.code(), "private_metrics_in_manifest");
    assert!(e.to_string().contains("runs[0]") && e.to_string().contains("`cogs`"), "{e}");
    verify(&m, &members, &private).unwrap();
    // Values that are not the digest's; another schema; not 32 hex digits of salt.
    for edit in [
        Box::new(|t: &mut bundle::MetricsText| {
            t.metrics.insert("gen_accuracy".into(), 0.5);
        }) as Box<dyn Fn(&mut bundle::MetricsText)>,
        Box::new(|t: &mut bundle::MetricsText| t.schema = "rexbench.metrics/v0".into()),
        Box::new(|t: &mut bundle::MetricsText| t.salt = "00".into()),
    ] {
        let (m, members) = sealed_metrics(&s, edit);
        let e = verify(&m, &members, &s.verifier()).unwrap_err();
        assert_eq!(e.code(), "invalid_metrics_text", "{e}");
        assert!(e.to_string().contains("x-metrics"), "{e}");
    }
    // Half there: metrics beside the digest, a digest without x-metrics, x-metrics
    // without a digest, a digest that is not hex, another media type.
    let (sealed, members) = sealed_metrics(&s, |_| {});
    let digest = sealed["runs"][0]["artifacts"][bundle::METRICS_ROLE].as_str().unwrap().to_owned();
    for edit in [
        Box::new(|m: &mut Value| run0(m)["metrics"] = json!({"gen_accuracy": 0.4}))
            as Box<dyn Fn(&mut Value)>,
        Box::new(|m: &mut Value| {
            run0(m)["artifacts"].as_object_mut().unwrap().remove(bundle::METRICS_ROLE);
        }),
        Box::new(|m: &mut Value| {
            run0(m).as_object_mut().unwrap().remove("metrics_digest");
        }),
        Box::new(|m: &mut Value| run0(m)["metrics_digest"] = json!("AB".repeat(32))),
        Box::new(|m: &mut Value| m["artifacts"][&digest]["media_type"] = json!("text/plain")),
    ] {
        let mut m = sealed.clone();
        edit(&mut m);
        let got = verify(&m, &members, &s.verifier()).unwrap_err().code();
        // An x-metrics no run names is also an unused artifact: either says what is wrong.
        assert!(got == "invalid_metrics_text" || got == "artifact_unused", "{got}");
    }
}

/// Spec §5a: a board's claims, each broken as a submitter with a key of their own would
/// break it, and what stays within them.
#[test]
fn a_bundles_claims_are_held_to_the_boards_rules_where_it_is_told_them() {
    let s = sample();
    let claims = || {
        let mut c = bundle::Claims::default();
        c.task_sets.insert(bundle::TaskSet {
            digest: "ab".repeat(32),
            name: "RExBench".into(),
            version: "1.0".into(),
        });
        c.tasks.insert(
            "cogs".into(),
            bundle::TaskRule {
                attempts: 2,
                bounds: vec![
                    bundle::Bound {
                        metric: "gen_accuracy".into(),
                        expectation: bundle::Expectation::Equals(0.4562857142857143),
                    },
                    bundle::Bound { metric: "one".into(), expectation: bundle::Expectation::Equals(1.0) },
                ],
            },
        );
        c
    };
    let holding = s.verifier().holding(claims());
    let case = |edit: &dyn Fn(&mut Value)| -> Result<(), BundleError> {
        let mut m = s.manifest.clone();
        edit(&mut m);
        holding.verify(s.bundle_with(&serde_json::to_vec(&m).unwrap(), &s.members()).as_slice()).map(|_| ())
    };
    let code = |edit: &dyn Fn(&mut Value)| case(edit).map_err(|e| (e.code(), e.to_string()));
    // The sample is within them.
    assert_eq!(code(&|_| {}), Ok(()));
    // A task set the board does not know, by digest or by its name and version.
    let err = code(&|m| m["benchmark"]["task_set_digest"] = json!("0".repeat(64))).unwrap_err();
    assert_eq!(err.0, "unknown_task_set");
    let err = code(&|m| m["benchmark"]["version"] = json!("2.0")).unwrap_err();
    assert_eq!(err.0, "unknown_task_set");
    assert!(err.1.contains("(that digest is RExBench 1.0"), "{}", err.1);
    // More valid attempts than the card asks; infra_error attempts come in addition.
    let patch = s.manifest["runs"][0]["artifacts"]["patch"].clone();
    let add = |m: &mut Value, attempt: u32, outcome: &str| {
        let run = json!({"task": "cogs", "hint": "none", "attempt": attempt, "outcome": outcome,
                         "artifacts": {"patch": patch.clone()}});
        m["runs"].as_array_mut().unwrap().push(run);
    };
    assert_eq!(code(&|m| add(m, 2, "wrong_result")), Ok(()));
    let err = code(&|m| {
        add(m, 2, "wrong_result");
        add(m, 3, "wrong_result");
    })
    .unwrap_err();
    assert_eq!(err.0, "too_many_attempts");
    assert!(err.1.contains("task cogs, hint none: 3 valid attempts, but its card asks 2"), "{}", err.1);
    assert_eq!(
        code(&|m| {
            add(m, 2, "infra_error");
            add(m, 3, "wrong_result");
        }),
        Ok(())
    );
    // A success without the agent's record; a trajectory serves as well as a log.
    let err = code(&|m| {
        let log = run0(m)["artifacts"].as_object_mut().unwrap().remove("agent_log").unwrap();
        run0(m)["artifacts"]["x-notes"] = log;
    })
    .unwrap_err();
    assert_eq!(err.0, "agent_record_missing");
    assert_eq!(
        code(&|m| {
            let log = run0(m)["artifacts"].as_object_mut().unwrap().remove("agent_log").unwrap();
            run0(m)["artifacts"]["x-trajectory"] = log;
        }),
        Ok(())
    );
    // A success against its own metric, named with its value and the bound; a metric
    // the check does not hold, or a failure's, says nothing.
    let err = code(&|m| run0(m)["metrics"]["gen_accuracy"] = json!(0.5)).unwrap_err();
    assert_eq!(err.0, "success_against_check");
    assert!(
        err.1.contains("`gen_accuracy` is 0.5") && err.1.contains("exactly 0.4562857142857143"),
        "{}",
        err.1
    );
    assert_eq!(code(&|m| run0(m)["metrics"] = json!({"other": 0.5})), Ok(()));
    // A number is read as the double its text names: one unit below 1 is not 1.
    assert_eq!(code(&|m| run0(m)["metrics"]["one"] = json!(1.0)), Ok(()));
    let err = code(&|m| run0(m)["metrics"]["one"] = json!(0.9999999999999999)).unwrap_err();
    assert_eq!(err.0, "success_against_check", "{}", err.1);
    // An empty record is none.
    let empty = Digest::of(b"");
    let mut m = s.manifest.clone();
    m["runs"][0]["artifacts"]["agent_log"] = json!(empty.to_hex());
    m["artifacts"][empty.to_hex()] = json!({"media_type": "text/plain", "size": 0});
    let log = s.artifacts[2].0.to_hex();
    m["artifacts"].as_object_mut().unwrap().remove(&log);
    let mut members: Vec<(String, Vec<u8>)> =
        s.members().into_iter().filter(|(n, _)| !n.ends_with(&log)).collect();
    members.push((format!("artifacts/{}", empty.to_hex()), Vec::new()));
    let err =
        holding.verify(s.bundle_with(&serde_json::to_vec(&m).unwrap(), &members).as_slice()).unwrap_err();
    assert_eq!(err.code(), "agent_record_missing", "{err}");
    assert_eq!(
        code(&|m| {
            run0(m)["metrics"]["gen_accuracy"] = json!(0.5);
            run0(m)["outcome"] = json!("wrong_result");
        }),
        Ok(())
    );
    // Without the board's claims, none of this is a rule of the format.
    let loose = |edit: &dyn Fn(&mut Value)| {
        let mut m = s.manifest.clone();
        edit(&mut m);
        s.verifier()
            .verify(s.bundle_with(&serde_json::to_vec(&m).unwrap(), &s.members()).as_slice())
            .map(|_| ())
    };
    assert!(loose(&|m| m["benchmark"]["task_set_digest"] = json!("0".repeat(64))).is_ok());
    assert!(loose(&|m| run0(m)["metrics"]["gen_accuracy"] = json!(0.5)).is_ok());
}

/// The codes exercised here and in `limits` together cover every rule.
#[test]
fn every_code_is_exercised() {
    let mut covered: BTreeSet<&str> = manifest_rules().into_iter().map(|(_, c)| c).collect();
    covered.extend([
        // findings_words_live_in_x_findings_and_match_their_digests
        "finding_text_in_manifest",
        "invalid_finding_text",
        // a_private_checks_metrics_are_sealed_and_read_back
        "invalid_metrics_text",
        "private_metrics_in_manifest",
        // a_bundles_claims_are_held_to_the_boards_rules_where_it_is_told_them
        "unknown_task_set",
        "too_many_attempts",
        "agent_record_missing",
        "success_against_check",
        // archive_rules_each_have_their_code, envelope_rules_each_have_their_code,
        // a_key_twice…, io_failures…, a_failing_sink…
        "not_gzip",
        "corrupt_archive",
        "envelope_missing",
        "envelope_not_first",
        "unsafe_path",
        "unexpected_member",
        "duplicate_member",
        "artifact_unlisted",
        "artifact_missing",
        "artifact_size_mismatch",
        "artifact_digest_mismatch",
        "non_regular_member",
        "payload_type_mismatch",
        "payload_not_base64",
        "no_trusted_signature",
        "signature_invalid",
        "envelope_malformed",
        "io_error",
        "artifact_store_failed",
        "storage_full",
        // limits.rs
        "bundle_too_large",
        "uncompressed_too_large",
        "unaccounted_data",
        "too_many_members",
        "artifact_too_large",
        "envelope_too_large",
        "manifest_too_large",
    ]);
    let all: BTreeSet<&str> = BundleError::CODES.iter().copied().collect();
    assert_eq!(covered, all, "a rule without a test, or a test of a code that does not exist");
}

#[test]
fn attempts_without_a_gap_and_a_created_at_no_later_than_the_clock_are_accepted() {
    use time::OffsetDateTime;
    let s = sample();
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut m = s.manifest.clone();
        edit(&mut m);
        s.bundle_with(&serde_json::to_vec_pretty(&m).unwrap(), &s.members())
    };
    // Attempts 1, 2, 3 of one task and condition: no gap.
    let three = with(&|m| {
        for attempt in [2, 3] {
            let mut run = m["runs"][0].clone();
            run["attempt"] = json!(attempt);
            m["runs"].as_array_mut().unwrap().push(run);
        }
    });
    s.verifier().verify(three.as_slice()).unwrap();
    // The gap is named: the task, the condition and the missing attempt.
    let gap = with(&|m| run0(m)["attempt"] = json!(2));
    let err = s.verifier().verify(gap.as_slice()).unwrap_err().to_string();
    assert!(err.contains("task cogs, hint none: attempt 1 is missing, but attempt 2 is there"), "{err}");

    // created_at up to the tolerance ahead of the verifier's clock is accepted (clocks
    // differ); past it, refused, naming the value and the clock.
    let now = OffsetDateTime::parse("2026-11-20T12:00:00Z", &time::format_description::well_known::Rfc3339)
        .unwrap();
    let dated = |at: &str| with(&|m| m["created_at"] = json!(at));
    s.verifier().at(now).verify(dated("2026-11-20T12:10:00Z").as_slice()).unwrap();
    let err = s.verifier().at(now).verify(dated("2026-11-20T12:10:01Z").as_slice()).unwrap_err();
    assert_eq!(err.code(), "created_at_in_future");
    assert!(
        err.to_string()
            .contains("`2026-11-20T12:10:01Z` is later than the verifier's clock by more than the 600 s"),
        "{err}"
    );
    // An inspector has no clock to hold it to.
    bundle::Verifier::inspector().verify(dated("2999-01-01T00:00:00Z").as_slice()).unwrap();
}

/// Section 4m: a run's tokens, every kind or the two required ones, verify and are read
/// back as signed.
#[test]
fn a_runs_tokens_are_read_as_signed() {
    for tokens in [
        json!({"input": 182_000, "output": 9_400, "cache_read": 1_250_000, "cache_write": 64_000}),
        json!({"input": 0, "output": 0}),
        json!({"input": 1_000_000_000_000_u64, "output": 1}),
    ] {
        let s = sample();
        let mut m = s.manifest.clone();
        run0(&mut m)["tokens"] = tokens.clone();
        let verified = s
            .verifier()
            .verify(s.bundle_with(&serde_json::to_vec_pretty(&m).unwrap(), &s.members()).as_slice())
            .unwrap_or_else(|e| panic!("{tokens}: {e}"));
        let read = verified.manifest.runs[0].tokens.expect("tokens kept");
        let want = |k: &str| tokens.get(k).and_then(Value::as_u64).unwrap_or(0);
        assert_eq!(
            (read.input, read.output, read.cache_read, read.cache_write),
            (want("input"), want("output"), want("cache_read"), want("cache_write"))
        );
    }
}

/// Section 4n: runs of one task that ran one folder, in either form, verify, and the
/// folder is read back as signed.
#[test]
fn one_task_folder_per_task_is_accepted_and_read_as_signed() {
    for folder in [format!("sha256:{}", "0f".repeat(32)), "9a3c".to_owned()] {
        let s = sample();
        let mut m = s.manifest.clone();
        run0(&mut m)["task_folder"] = json!(folder);
        let verified = s
            .verifier()
            .verify(s.bundle_with(&serde_json::to_vec_pretty(&m).unwrap(), &s.members()).as_slice())
            .unwrap_or_else(|e| panic!("{folder}: {e}"));
        assert_eq!(verified.manifest.runs[0].task_folder.as_deref(), Some(folder.as_str()));
    }
}
