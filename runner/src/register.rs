//! `rexbench register`: asking a leaderboard to register a key, without writing to
//! anyone. The server issues a challenge for the key; the key signs
//! `rexbench-key-request/v1`, the challenge and the key id, a line each (proof that the
//! requester holds it); the request names the owner, a contact for the maintainers and,
//! optionally, a page and a note. `--status` shows where the key's request stands.

use base64::Engine as _;
use bundle::SecretKey;
use serde_json::{Value, json};

use crate::Error;
use crate::login::{agent, field, post};

/// What a request states beside its key.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub owner: &'a str,
    pub contact: &'a str,
    pub url: Option<&'a str>,
    pub note: Option<&'a str>,
}

/// Files a request for `key` on `server`: the server's answer (the request, its page).
pub fn register(server: &str, key: &SecretKey, request: &Request<'_>) -> Result<Value, Error> {
    let server = server.trim_end_matches('/');
    let public = key.public_key();
    let keyid = public.keyid().to_string();
    let pem = public.to_pem();
    let url = format!("{server}/api/v1/key-requests/challenge");
    let challenge = post(&url, &json!({ "public_key": pem }))?;
    let (message, nonce) = (field(&url, &challenge, "message")?, field(&url, &challenge, "challenge")?);
    let (Some(message), Some(nonce)) = (message.as_str(), nonce.as_str()) else {
        return Err(Error::Answer { url, reason: "`message` and `challenge` are not text".into() });
    };
    // Sign only what this side would have written itself: the server cannot make the
    // key sign anything but a request for itself.
    let expected = format!("rexbench-key-request/v1\n{nonce}\n{keyid}\n");
    if message != expected {
        return Err(Error::Answer {
            url,
            reason: "the message to sign is not a key-request challenge for this key".into(),
        });
    }
    let signature = base64::engine::general_purpose::STANDARD.encode(key.sign(expected.as_bytes()));
    let url = format!("{server}/api/v1/key-requests");
    post(
        &url,
        &json!({
            "public_key": pem,
            "owner": request.owner,
            "contact": request.contact,
            "url": request.url,
            "note": request.note,
            "challenge": nonce,
            "signature": signature,
        }),
    )
}

/// Where the request of the key `keyid` stands on `server`: signed in with `token` (from
/// `rexbench login`, which a pending key may do), its held bundles too.
pub fn status(server: &str, keyid: &str, token: Option<&str>) -> Result<Value, Error> {
    let server = server.trim_end_matches('/');
    let url = format!("{server}/api/v1/key-requests/{keyid}");
    let request = agent().get(&url);
    let request = match token {
        Some(t) => request.header("authorization", &format!("Bearer {t}")),
        None => request,
    };
    let mut response = request.call().map_err(|e| Error::Reach { url: url.clone(), source: e.into() })?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .with_config()
        .limit(4 << 20)
        .read_to_string()
        .map_err(|e| Error::Fetch { url: url.clone(), reason: format!("reading the answer: {e}") })?;
    let answer: Value = serde_json::from_str(&text)
        .map_err(|e| Error::Answer { url: url.clone(), reason: format!("{e}: {text:.200}") })?;
    if status != 200 {
        return Err(Error::Fetch {
            url,
            reason: format!(
                "answered {status} {}: {}",
                answer["error"]["code"].as_str().unwrap_or("error"),
                answer["error"]["message"].as_str().unwrap_or("")
            ),
        });
    }
    Ok(answer)
}

/// A request's answer in lines for a terminal.
pub fn describe(server: &str, answer: &Value) -> String {
    let r = &answer["request"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut out = format!(
        "key request {} for {} (key {}): {}\n",
        r["id"],
        text(&r["owner"]),
        text(&r["keyid"]),
        text(&r["status"])
    );
    if let Some(tier) = r["tier"].as_str() {
        out.push_str(&format!("  approved as {tier}\n"));
    }
    if let Some(reason) = r["reason"].as_str() {
        out.push_str(&format!("  declined: {}\n", reason));
    }
    if let Some(held) = r["private"]["held"].as_array() {
        for h in held {
            out.push_str(&format!(
                "  held: {} ({} runs, {} successes), bundle {}\n",
                text(&h["agent_id"]),
                h["runs"],
                h["successes"],
                text(&h["bundle_id"])
            ));
        }
    }
    out.push_str(&format!("  status: {}{}\n", server.trim_end_matches('/'), text(&answer["page"])));
    out
}
