//! Schemathesis (property-based testing from the server's own `/api/v1/openapi.json`, a
//! tool no one here wrote) against a real server process holding the demo's data:
//! every operation, submissions and admin included, in every phase (examples, coverage,
//! fuzzing, stateful) with every check. It must find nothing: every answer, refusals
//! included, is one the document describes.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use store::Backend;

use crate::harness::python;
use crate::process::{Server, database_url};

const TOKEN: &str = "schemathesis-admin-token";

fn get_json(url: &str) -> Value {
    let body =
        ureq::get(url).call().unwrap_or_else(|e| panic!("{url}: {e}")).into_body().read_to_string().unwrap();
    serde_json::from_str(&body).unwrap()
}

/// Registers a new key with the server's own command, before it starts; returns its id.
fn add_key(backend: &Backend, blobs: &Path, dir: &Path, name: &str, tier: &str) -> String {
    let key = bundle::SecretKey::generate();
    let pem = dir.join(format!("{name}.pub.pem"));
    std::fs::write(&pem, key.public_key().to_pem()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rexbench-server"))
        .args(["keys", "add", "--public-key", pem.to_str().unwrap(), "--owner", name, "--tier", tier])
        .env("DATABASE_URL", database_url(backend))
        .env("REXBENCH_BLOBS", blobs)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    key.public_key().keyid().to_hex()
}

/// What schemathesis said, and whether it found anything.
fn schemathesis(url: &str, config: &Path, mode: &str, dir: &Path) -> (bool, String) {
    let program = python().with_file_name("schemathesis");
    let out = Command::new(&program)
        .arg("--config-file")
        .arg(config)
        .args(["run", &format!("{url}/api/v1/openapi.json"), &format!("--mode={mode}")])
        .args([
            "--phases=examples,coverage,fuzzing,stateful",
            "--checks=all",
            "--max-examples=40",
            "--seed=26",
        ])
        .args(["--workers=1", "--request-timeout=30"])
        .env("SCHEMATHESIS_HOOKS", "schemathesis_hooks")
        .env("PYTHONPATH", crate::harness::repo().join("server/tests/python"))
        .env("NO_COLOR", "1")
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), said)
}

#[test]
fn schemathesis_finds_nothing_on_any_operation() {
    let tmp = tempfile::tempdir().unwrap();
    let backend = Backend::Sqlite { path: tmp.path().join("db.sqlite") };
    let blobs = tmp.path().join("blobs");
    add_key(&backend, &blobs, tmp.path(), "Fuzzing submitter", "submitter");
    // A key the stateful phase may revoke as often as it likes.
    let revocable = add_key(&backend, &blobs, tmp.path(), "Revocable", "submitter");
    let server =
        Server::start_args(&["serve", "--demo"], &backend, &blobs, &[("REXBENCH_ADMIN_TOKEN", TOKEN)]);
    let url = &server.url;
    let document = get_json(&format!("{url}/api/v1/openapi.json"));
    let operations: usize =
        document["paths"].as_object().unwrap().values().map(|p| p.as_object().unwrap().len()).sum();

    // Everything, negative data included, on the document alone.
    let config = tmp.path().join("schemathesis.toml");
    std::fs::write(
        &config,
        format!(
            r#"headers = {{ Authorization = "Bearer {TOKEN}" }}

# A bundle's bytes and a key's PEM obey rules no JSON schema can state (a signed
# archive, an Ed25519 key; an owner not all blank): a schema-valid body may still be
# refused, with the 4xx the document gives for it.
[[operations]]
include-name = "POST /api/v1/submissions"
checks.positive_data_acceptance.expected-statuses = [200, 201, 400, 401, 403, 413, 422]

[[operations]]
include-name = "POST /api/v1/admin/keys"
checks.positive_data_acceptance.expected-statuses = [201, 409, 422]

# A key request's key and signature, likewise; and the words of a request, a decline, a
# task set or a variant (not all blank, no control character, a task of the cards, a
# variant registered) are held to rules of their own, each refusal its 422 and code.
[[operations]]
include-name = "POST /api/v1/key-requests/challenge"
checks.positive_data_acceptance.expected-statuses = [201, 409, 422]

[[operations]]
include-name = "POST /api/v1/key-requests"
checks.positive_data_acceptance.expected-statuses = [201, 401, 409, 422]

[[operations]]
include-name = "POST /api/v1/admin/key-requests/{{id}}/decline"
checks.positive_data_acceptance.expected-statuses = [200, 404, 409, 422]

[[operations]]
include-name = "POST /api/v1/admin/task-sets"
checks.positive_data_acceptance.expected-statuses = [200, 201, 422]

[[operations]]
include-name = "POST /api/v1/admin/variants"
checks.positive_data_acceptance.expected-statuses = [200, 201, 422]

[[operations]]
include-name = "POST /api/v1/admin/variants/retire"
checks.positive_data_acceptance.expected-statuses = [200, 422]
"#
        ),
    )
    .unwrap();
    let (ok, said) = schemathesis(url, &config, "all", tmp.path());
    assert!(ok, "schemathesis found failures:\n{said}");
    assert!(said.contains(&format!("Selected: {operations}/{operations}")), "not every operation: {said}");
    assert!(said.contains(&format!("Tested: {operations}")), "not every operation was tested: {said}");

    // Schema-valid requests with identifiers that exist, so that every handler is
    // reached past its 404.
    let agent_page = ureq::get(&format!("{url}/agents/example-agent?task=wordfreq&hint=none"))
        .call()
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap();
    let run = agent_page
        .split("/runs/")
        .nth(1)
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .to_owned();
    let detail = get_json(&format!("{url}/api/v1/runs/{run}"));
    let digest = detail["artifacts"][0]["digest"].as_str().unwrap().to_owned();
    let bundle_id = detail["bundle_id"].as_str().unwrap().to_owned();
    let existing = tmp.path().join("existing.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    for (operation, name, value) in [
        ("GET /api/v1/agents/{id}", "id", "openhands-claude-4.5-opus"),
        ("GET /api/v1/tasks/{id}", "id", "cogs"),
        ("GET /api/v1/runs/{id}", "id", run.as_str()),
        ("GET /api/v1/submissions/{bundle_id}/envelope", "bundle_id", bundle_id.as_str()),
        ("GET /artifacts/{digest}", "digest", digest.as_str()),
        ("POST /api/v1/admin/keys/{keyid}/revoke", "keyid", revocable.as_str()),
    ] {
        text.push_str(&format!(
            "\n[[operations]]\ninclude-name = \"{operation}\"\nparameters = {{ \"path.{name}\" = \"{value}\" }}\n"
        ));
    }
    std::fs::write(&existing, text).unwrap();
    let (ok, said) = schemathesis(url, &existing, "positive", tmp.path());
    assert!(ok, "schemathesis found failures with real identifiers:\n{said}");
    assert!(said.contains(&format!("Tested: {operations}")), "{said}");
    drop(server);
}
